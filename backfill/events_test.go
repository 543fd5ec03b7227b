package backfill

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/topology"
)

// tevCompare orders entries as tevLess does, for the slices package.
func tevCompare(a, b timelineEntry) int {
	switch {
	case entryLess(a, b):
		return -1
	case entryLess(b, a):
		return 1
	}
	return 0
}

// TestEventsMatchSortedSlice checks the runs of entries against a sorted
// slice: after any sequence of inserts (some replacing an entry) and
// deletes (of present entries and of absent ones), one at a time or in
// sorted batches (scattered, bunched at one time, or a stretch of the
// set), every walk from any start sees the model's entries from there
// on, in order, and stops when told to; every count of the entries in a
// span is the model's, up to its limit; every run is non-empty, no
// longer than its limit, keyed by its first entry, and holds no array
// grown past the limit; and no two neighbouring runs are both under a
// quarter of the limit (deletes join them). Runs are made small so that
// splits, joins, emptied runs and new first entries happen often.
func TestEventsMatchSortedSlice(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := newEvents(rapid.IntRange(1, 12).Draw(t, "max"))
		var model []timelineEntry
		cmp := tevCompare
		entry := func(label string) timelineEntry {
			return timelineEntry{at: time.Duration(rapid.IntRange(0, 20).Draw(t, label+"at")), seq: int32(rapid.IntRange(0, 30).Draw(t, label+"seq"))}
		}
		ops := rapid.IntRange(1, 200).Draw(t, "ops")
		for range ops {
			batch := func() []timelineEntry {
				// Sorted and distinct, some from the model (present),
				// some drawn (mostly absent), often bunched at one time
				// as a reservation's ends are.
				if len(model) > 0 && rapid.IntRange(0, 3).Draw(t, "batchSlice") == 0 {
					// A stretch of the model, which may be a whole
					// run or more, as a stacked gang's old ends are.
					a := rapid.IntRange(0, len(model)-1).Draw(t, "sliceFrom")
					b := rapid.IntRange(a+1, min(len(model), a+3*s.runMax)).Draw(t, "sliceTo")
					return slices.Clone(model[a:b])
				}
				var es []timelineEntry
				at := time.Duration(rapid.IntRange(0, 20).Draw(t, "batchAt"))
				for range rapid.IntRange(0, 3*s.runMax).Draw(t, "batchLen") {
					var e timelineEntry
					switch rapid.IntRange(0, 2).Draw(t, "batchKind") {
					case 0:
						if len(model) == 0 {
							continue
						}
						e = model[rapid.IntRange(0, len(model)-1).Draw(t, "batchWhich")]
					case 1:
						e = entry("batch")
					default:
						e = timelineEntry{at: at, seq: int32(rapid.IntRange(0, 30).Draw(t, "batchSeq"))}
					}
					e.n = topology.NodeID(1 + rapid.IntRange(0, 5).Draw(t, "batchN"))
					es = append(es, e)
				}
				slices.SortFunc(es, cmp)
				return slices.CompactFunc(es, func(a, b timelineEntry) bool { return cmp(a, b) == 0 })
			}
			e := entry("e")
			switch op := rapid.IntRange(0, 4).Draw(t, "op"); {
			case op < 2:
				e.n = topology.NodeID(1 + rapid.IntRange(0, 5).Draw(t, "n")) // a replacement differs in n
				s.Insert(e)
				i, found := slices.BinarySearchFunc(model, e, cmp)
				if found {
					model[i] = e
				} else {
					model = slices.Insert(model, i, e)
				}
			case op == 2:
				if len(model) > 0 && rapid.Bool().Draw(t, "present") {
					e = model[rapid.IntRange(0, len(model)-1).Draw(t, "which")]
				}
				i, found := slices.BinarySearchFunc(model, e, cmp)
				if got := s.Delete(e); got != found {
					t.Fatalf("Delete(%v) = %v, want %v", e, got, found)
				}
				if found {
					model = slices.Delete(model, i, i+1)
				}
			case op == 3:
				es := batch()
				s.InsertSorted(slices.Clone(es))
				for _, e := range es {
					if i, found := slices.BinarySearchFunc(model, e, cmp); found {
						model[i] = e
					} else {
						model = slices.Insert(model, i, e)
					}
				}
			default:
				es := batch()
				want := 0
				for _, e := range es {
					if i, found := slices.BinarySearchFunc(model, e, cmp); found {
						model = slices.Delete(model, i, i+1)
						want++
					}
				}
				if got := s.DeleteSorted(slices.Clone(es)); got != want {
					t.Fatalf("DeleteSorted(%v) = %d, want %d", es, got, want)
				}
			}
			if s.Len() != len(model) {
				t.Fatalf("Len = %d, want %d", s.Len(), len(model))
			}
			from := entry("from")
			stop := rapid.IntRange(0, len(model)+1).Draw(t, "stop")
			var got []timelineEntry
			stopped := false
			s.From(from, func(evs []timelineEntry) bool {
				if stopped {
					t.Fatalf("From went on after it was told to stop")
				}
				if len(evs) == 0 {
					t.Fatalf("From yielded an empty run")
				}
				for _, e := range evs {
					if len(got) == stop {
						stopped = true
						return false
					}
					got = append(got, e)
				}
				return true
			})
			i, _ := slices.BinarySearchFunc(model, from, cmp)
			want := model[i:]
			want = want[:min(stop, len(want))]
			if !slices.Equal(got, want) {
				t.Fatalf("From(%v) stopping after %d = %v, want %v", from, stop, got, want)
			}
			var all []timelineEntry
			s.All(func(evs []timelineEntry) bool {
				all = append(all, evs...)
				return true
			})
			if !slices.Equal(all, model) {
				t.Fatalf("All = %v, want %v", all, model)
			}
			lo := time.Duration(rapid.IntRange(0, 21).Draw(t, "countFrom"))
			hi := lo + time.Duration(rapid.IntRange(-1, 21).Draw(t, "countSpan"))
			limit := rapid.IntRange(1, len(model)+2).Draw(t, "countLimit")
			in := 0
			for _, e := range model {
				if lo <= e.at && e.at <= hi {
					in++
				}
			}
			if got := s.Count(lo, hi, limit); got != min(in, limit) {
				t.Fatalf("Count(%v, %v, %d) = %d, want %d", lo, hi, limit, got, min(in, limit))
			}
			var prev *entryRun
			s.runs.Ascend(func(r *entryRun) bool {
				if len(r.entries) == 0 || len(r.entries) > s.runMax || r.first != r.entries[0] {
					t.Fatalf("run keyed %v holds %d entries (at most %d), first %v", r.first, len(r.entries), s.runMax, r.entries)
				}
				if cap(r.entries) > s.runMax+1 {
					t.Fatalf("run keyed %v keeps an array of %d entries, past the limit's %d", r.first, cap(r.entries), s.runMax+1)
				}
				if prev != nil && 4*len(prev.entries) < s.runMax && 4*len(r.entries) < s.runMax {
					t.Fatalf("neighbouring runs of %d and %d entries, both under a quarter of %d", len(prev.entries), len(r.entries), s.runMax)
				}
				prev = r
				return true
			})
		}
	})
}

// TestEventsDeleteSortedJoinsAcrossAnEmptiedRun deletes a whole run that
// lies between two short ones: they meet, and must join. (A single
// Delete only empties a run of one entry, itself short, so its
// neighbours were not short.)
func TestEventsDeleteSortedJoinsAcrossAnEmptiedRun(t *testing.T) {
	s := newEvents(8) // short: under 2 entries
	var model []timelineEntry
	seq := int32(0)
	for _, k := range []int{1, 6, 1, 6} {
		r := &entryRun{entries: make([]timelineEntry, 0, s.runMax+1)}
		for range k {
			e := timelineEntry{at: time.Duration(seq), seq: seq}
			seq++
			r.entries = append(r.entries, e)
			model = append(model, e)
		}
		r.first = r.entries[0]
		s.runs.ReplaceOrInsert(r)
		s.n += k
	}
	if got := s.DeleteSorted(slices.Clone(model[1:7])); got != 6 {
		t.Fatalf("DeleteSorted found %d entries, want 6", got)
	}
	var lens []int
	s.runs.Ascend(func(r *entryRun) bool {
		lens = append(lens, len(r.entries))
		return true
	})
	for i := 1; i < len(lens); i++ {
		if 4*lens[i-1] < s.runMax && 4*lens[i] < s.runMax {
			t.Fatalf("runs of %v entries: two neighbours both under a quarter of %d", lens, s.runMax)
		}
	}
	if s.Len() != 8 {
		t.Fatalf("Len = %d, want 8", s.Len())
	}
}

// TestEventsDeletesJoinShortRuns thins out many runs, deleting most of
// the entries of each in turn, and checks after every delete that no two
// neighbouring runs are both under a quarter of the limit.
func TestEventsDeletesJoinShortRuns(t *testing.T) {
	for _, runMax := range []int{4, 8, 16} {
		s := newEvents(runMax)
		for i := range 400 {
			s.Insert(timelineEntry{at: time.Duration(i), seq: int32(i)})
		}
		for _, keep := range []int{2, 3, 5} {
			for i := range 400 {
				if i%keep == 0 || !s.Delete(timelineEntry{at: time.Duration(i), seq: int32(i)}) {
					continue
				}
				var prev *entryRun
				s.runs.Ascend(func(r *entryRun) bool {
					if prev != nil && s.short(prev) && s.short(r) {
						t.Fatalf("limit %d, after deleting %d: neighbouring runs of %d and %d entries", runMax, i, len(prev.entries), len(r.entries))
					}
					prev = r
					return true
				})
			}
		}
	}
}
