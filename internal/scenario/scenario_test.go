package scenario

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRun(t *testing.T) {
	story := func(w io.Writer) error { _, err := io.WriteString(w, "once upon a time\n"); return err }
	broken := func(io.Writer) error { return errors.New("the cluster is on fire") }
	tests := []struct {
		name        string
		args        []string
		run         func(io.Writer) error
		code        int
		out, errOut string
	}{
		{"no arguments", nil, story, 0, "once upon a time\n", ""},
		{"help", []string{"-h"}, story, 0, "", "usage: demo (it takes no arguments: it runs one fixed scenario and prints it)\n"},
		{"long help", []string{"--help"}, story, 0, "", "usage: demo (it takes no arguments: it runs one fixed scenario and prints it)\n"},
		{"a flag", []string{"-nodes", "4"}, story, 2, "", "demo: unexpected argument \"-nodes\"; usage: demo (it takes no arguments: it runs one fixed scenario and prints it)\n"},
		{"a file", []string{"snapshot.json"}, story, 2, "", "demo: unexpected argument \"snapshot.json\"; usage: demo (it takes no arguments: it runs one fixed scenario and prints it)\n"},
		{"a failure", nil, broken, 1, "", "demo: the cluster is on fire\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			assert.Equal(t, tt.code, Run("demo", tt.args, &out, &errOut, tt.run))
			assert.Equal(t, tt.out, out.String())
			assert.Equal(t, tt.errOut, errOut.String())
		})
	}
}
