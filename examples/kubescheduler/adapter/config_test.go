package adapter

import (
	"strings"
	"testing"

	"github.com/gpusched/gpusched/scheduler"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(map[string]string{
		ConfigKey: `{"tiers": {"prod": 0, "batch": 3}, "teamLabel": "team",
			"teams": [{"name": "a", "share": 40, "quota": {"gpus": 100, "borrowLimit": 20}}],
			"levels": [{"name": "rack", "label": "example.com/rack"}]}`,
		PolicyKey: `{"backfill": "conservative", "preemption": {"maxEvictedGPUs": 16}}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Tiers["batch"] != 3 || c.TeamLabel != "team" || c.Teams[0].Quota.BorrowLimit != 20 || c.Levels[0].Name != "rack" ||
		c.GPUResource != DefaultGPUResource || c.Policy.Backfill != scheduler.Conservative || c.Policy.MaxEvictedGPUs != 16 {
		t.Errorf("config %+v", c)
	}
	d, err := ParseConfig(nil)
	if err != nil || d.GPUTypeLabel != DefaultGPUTypeLabel || len(d.Levels) != 2 {
		t.Errorf("defaults %+v %v", d, err)
	}
}

func TestParseConfigErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		data map[string]string
		want string
	}{
		{map[string]string{ConfigKey: `{"tiers": {"prod": 0}`}, "config.json: unexpected EOF"},
		{map[string]string{ConfigKey: `{"tier": {}}`}, `config.json: json: unknown field "tier"`},
		{map[string]string{ConfigKey: `{"tiers": {"prod": 4}}`}, `config.json: tiers["prod"]: tier must be in 0..3, got 4`},
		{map[string]string{ConfigKey: `{"teams": [{"name": "a"}, {"name": "a"}]}`}, `config.json: teams[1]: team "a" given twice`},
		{map[string]string{ConfigKey: `{"levels": [{"name": "x"}]}`}, `config.json: levels[0]: name and label must not be empty`},
		{map[string]string{PolicyKey: `{"backfill": "sometimes"}`}, `policy.json: config: backfill`},
	} {
		_, err := ParseConfig(tc.data)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want prefix %q", tc.data, err, tc.want)
		}
	}
}
