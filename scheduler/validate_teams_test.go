package scheduler

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/fairshare"
)

// quadraticTeamTree is the team-tree check written the obvious way,
// kept as the oracle: the first team in input order with an unknown
// parent is an error, else the first whose walk up from its parent is
// longer than the team count.
func quadraticTeamTree(s *Snapshot) error {
	teams := make(map[string]int, len(s.Teams))
	for i := range s.Teams {
		teams[s.Teams[i].Name] = i
	}
	for i := range s.Teams {
		t := &s.Teams[i]
		if _, ok := teams[t.Parent]; t.Parent != "" && !ok {
			return verr(fmt.Sprintf("teams[%d] %q: parent", i, t.Name), "unknown team %q", t.Parent)
		}
	}
	for i := range s.Teams {
		t := &s.Teams[i]
		if t.Parent == "" {
			continue
		}
		p, steps := t.Parent, 0
		for p != "" && steps <= len(s.Teams) {
			p = s.Teams[teams[p]].Parent
			steps++
		}
		if p != "" {
			return verr(fmt.Sprintf("teams[%d] %q: parent", i, t.Name), "cycle in the team tree")
		}
	}
	return nil
}

// errText is err's message, or "<nil>".
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestTeamTreeMatchesQuadratic draws parent forests, some with cycles
// (a parent drawn from any team, itself included) and unknown parents,
// in random input order, and checks that Validate reports what the
// quadratic check does.
func TestTeamTreeMatchesQuadratic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 12).Draw(t, "teams")
		// Team k may take a parent among teams 0..k-1 (a forest), or,
		// less often, any team (which may close a cycle) or an unknown
		// name; then the input order is shuffled.
		teams := make([]Team, n)
		for k := range teams {
			teams[k] = Team{Name: fmt.Sprintf("t%d", k), Share: 1}
			switch rapid.IntRange(0, 9).Draw(t, "kind") {
			case 0, 1, 2:
			case 3, 4, 5, 6:
				if k > 0 {
					teams[k].Parent = teams[rapid.IntRange(0, k-1).Draw(t, "up")].Name
				}
			case 7, 8:
				teams[k].Parent = fmt.Sprintf("t%d", rapid.IntRange(0, n-1).Draw(t, "any"))
			default:
				teams[k].Parent = "org"
			}
		}
		s := baseSnap()
		s.Teams = rapid.Permutation(teams).Draw(t, "order")
		want := errText(quadraticTeamTree(s))
		if got := errText(Validate(s)); got != want {
			t.Fatalf("Validate: %s\nquadratic check: %s", got, want)
		}
	})
}

// teamChain is a snapshot with n teams in a chain, t0 at the top, listed
// top first.
func teamChain(n int) *Snapshot {
	s := baseSnap()
	s.Teams = make([]Team, n)
	for i := range s.Teams {
		s.Teams[i] = Team{Name: fmt.Sprintf("t%d", i), Share: 1}
		if i > 0 {
			s.Teams[i].Parent = s.Teams[i-1].Name
		}
	}
	s.Jobs[0].Team = s.Teams[n-1].Name
	return s
}

// deepChain is the longest chain of teams Validate accepts.
const deepChain = fairshare.MaxDepth + 1

func TestValidateDeepTeamChain(t *testing.T) {
	s := teamChain(deepChain)
	if err := Validate(s); err != nil {
		t.Fatalf("chain of %d teams: %v", deepChain, err)
	}
	// The same chain listed bottom first.
	r := *s
	r.Teams = make([]Team, len(s.Teams))
	for i := range s.Teams {
		r.Teams[len(s.Teams)-1-i] = s.Teams[i]
	}
	if err := Validate(&r); err != nil {
		t.Fatalf("chain of %d teams, bottom first: %v", deepChain, err)
	}
	// The top's parent closes a cycle through half the chain: every team
	// leads to it, so the first listed is reported.
	s.Teams[0].Parent = s.Teams[deepChain/2].Name
	want := `snapshot: teams[0] "t0": parent: cycle in the team tree`
	if got := errText(Validate(s)); got != want {
		t.Fatalf("chain with a cycle: %s, want %s", got, want)
	}
	r.Teams[len(r.Teams)-1].Parent = s.Teams[deepChain/2].Name
	want = fmt.Sprintf(`snapshot: teams[0] "t%d": parent: cycle in the team tree`, deepChain-1)
	if got := errText(Validate(&r)); got != want {
		t.Fatalf("chain with a cycle, bottom first: %s, want %s", got, want)
	}
}

// BenchmarkValidateTeamChain validates a snapshot whose teams form one
// chain as deep as Validate accepts.
func BenchmarkValidateTeamChain(b *testing.B) {
	s := teamChain(deepChain)
	for b.Loop() {
		if err := Validate(s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTeamTreeUnknownAncestor: a team whose grandparent is unknown is not
// a cycle; the team naming the unknown parent is the one reported.
func TestTeamTreeUnknownAncestor(t *testing.T) {
	s := teamChain(1)
	s.Teams = []Team{{Name: "a", Parent: "b"}, {Name: "b", Parent: "org"}, {Name: "t0"}}
	want := `snapshot: teams[1] "b": parent: unknown team "org"`
	if got := errText(Validate(s)); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestValidateRefusesTeamTreesTooDeep: a chain one team longer than
// deepChain is refused, top first or bottom first, with the deepest team
// named, and so is one of 40,000 at once; Step went on to walk such
// chains (deep enough ones overflowed the stack).
func TestValidateRefusesTeamTreesTooDeep(t *testing.T) {
	s := teamChain(deepChain + 1)
	want := fmt.Sprintf(`snapshot: teams[%d] "t%d": parent: more than %d levels below a top-level team`, deepChain, deepChain, fairshare.MaxDepth)
	require.Equal(t, want, errText(Validate(s)))
	r := *s
	r.Teams = slices.Clone(s.Teams)
	slices.Reverse(r.Teams)
	want = fmt.Sprintf(`snapshot: teams[0] "t%d": parent: more than %d levels below a top-level team`, deepChain, fairshare.MaxDepth)
	require.Equal(t, want, errText(Validate(&r)))
	var ve *ValidationError
	require.ErrorAs(t, Validate(teamChain(40000)), &ve)
}
