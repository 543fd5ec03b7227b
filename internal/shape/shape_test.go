package shape

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLibraryShape holds every library file to the limits of the package
// doc and lists each place that breaks one.
func TestLibraryShape(t *testing.T) {
	root, err := ModuleRoot(".")
	require.NoError(t, err)
	found, err := Check(root)
	require.NoError(t, err)
	if len(found) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d places break the code-shape limits (see internal/shape/doc.go):\n", len(found))
	for _, f := range found {
		fmt.Fprintf(&b, "\t%s\n", f)
	}
	t.Error(b.String())
}

// source is a file of package p with one function f whose body has body
// lines (so f is body+2 lines long), doc as its doc comment and first as
// the first line of its body; the file is padded with blank lines to at
// least pad lines.
func source(doc, first string, body, pad int) []byte {
	var b strings.Builder
	b.WriteString("package p\n\n")
	if doc != "" {
		b.WriteString(doc + "\n")
	}
	b.WriteString("func f() {\n")
	if first != "" {
		b.WriteString(first + "\n")
		body--
	}
	for range body {
		b.WriteString("\t_ = 0\n")
	}
	b.WriteString("}\n")
	for n := strings.Count(b.String(), "\n"); n < pad; n++ {
		b.WriteString("\n")
	}
	return []byte(b.String())
}

func TestCheckSource(t *testing.T) {
	const why = "// Long: one table of cases, read top to bottom."
	for _, tc := range []struct {
		name        string
		doc, first  string
		body, pad   int
		funcs, file int // findings expected
		lines       int // the function's length when not body+2
	}{
		{name: "80 lines, no reason", body: 78},
		{name: "81 lines, no reason", body: 79, funcs: 1},
		{name: "81 lines, reason in the doc comment", doc: "// f does it all.\n//\n" + why, body: 79},
		{name: "81 lines, reason on the first body line", first: "\t" + why, body: 79},
		{name: "81 lines, bare tag in the doc", doc: "// Long:", body: 79, funcs: 1},
		{name: "81 lines, other doc", doc: "// f is long.", body: 79, funcs: 1},
		{name: "81 lines, reason on the second body line", body: 78, first: "\t_ = 0\n\t" + why, funcs: 1, lines: 81},
		{name: "900-line file", body: 3, pad: 900},
		{name: "901-line file", body: 3, pad: 901, file: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := source(tc.doc, tc.first, tc.body, tc.pad)
			found, err := CheckSource("p.go", src)
			require.NoError(t, err)
			lines := tc.lines
			if lines == 0 {
				lines = tc.body + 2
			}
			var funcs, file int
			for _, f := range found {
				if f.Func == "" {
					file++
				} else {
					funcs++
					require.Equal(t, "f", f.Func)
					require.Equal(t, lines, f.Lines)
				}
			}
			require.Equal(t, tc.funcs, funcs, "function findings: %v", found)
			require.Equal(t, tc.file, file, "file findings: %v", found)
		})
	}
}

func TestFuncName(t *testing.T) {
	var b strings.Builder
	b.WriteString("package p\n\ntype T struct{}\ntype G[K, V any] struct{}\ntype H[K any] struct{}\n")
	// Each function long enough to be reported, so that its name shows.
	for _, head := range []string{"func (T) A()", "func (*T) B()", "func (*G[K, V]) C()", "func (H[K]) D()", "func E()"} {
		b.WriteString(head + " {" + strings.Repeat("\n", MaxFuncLines) + "}\n")
	}
	found, err := CheckSource("p.go", []byte(b.String()))
	require.NoError(t, err)
	var got []string
	for _, f := range found {
		got = append(got, f.Func)
	}
	require.Equal(t, []string{"T.A", "T.B", "G.C", "H.D", "E"}, got)
}
