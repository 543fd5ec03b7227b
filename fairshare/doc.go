// Package fairshare shares a GPU cluster between teams over time.
//
// It is a leaf package: it imports only the standard library, so a
// scheduler other than gpusched's can use it on its own. It never reads a
// clock (time is always passed in), keeps no package-level state, starts no
// goroutines and does not log. Invalid input is reported as an error value,
// never a panic, and no output depends on map iteration order.
//
// # Pieces
//
//   - [Tree]: the account tree. Teams (accounts) hold shares of their parent,
//     e.g. 40/35/25, and may be nested. [NewTree] validates it; children are
//     kept ordered by name. [Tree.WithMissing] adds teams the tree lacks with
//     share 1 ("a team missing from the team list gets share 1 and usage 0").
//   - [Ledger]: usage in GPU-seconds, decayed exponentially with a half-life
//     (default 7 days, like Slurm's PriorityDecayHalfLife) and rolled up to
//     parents. [Decay] is the pure decay helper.
//   - [Tree.Factors]: the fair-share factor of every account, both Slurm's
//     classic 2^(-U_eff/S) and Slurm's Fair Tree ranking.
//   - [Weights]: the multifactor priority of a job inside its tier
//     (fair-share, age, size; size weighs 0 by default, so jobs of one tier
//     and one account go in submission order), and [Weights.Compare], which
//     orders jobs with the tier as a strict first key.
//   - [Quota]: a team's nominal GPUs and borrowing limit; [Quota.Admit] says
//     whether a job may start and why not.
//   - [Factors.Report] and [WriteReport]: a table like `sshare -l`.
//
// # Default factor: Fair Tree
//
// [FairTree] is the default [Algorithm] (the zero value), as it is Slurm's
// default since 19.05. Fair Tree compares siblings only with each other, by
// LevelFS = S/U (their share of the parent's shares over their share of the
// parent's usage), and ranks depth first. This guarantees what the classic
// factor does not: if team X has a higher LevelFS than its sibling Y, every
// sub-team of X outranks every sub-team of Y, whatever the depth or the
// number of sub-teams, and a sub-team cannot gain over another team by
// splitting itself up. Factors are ranks, so they are spread evenly over
// (0,1] and do not vanish to 0 under heavy usage as 2^(-U/S) does. The
// classic factor remains available as [Classic].
//
// # How a scheduler uses it
//
// At each scheduling step, with the snapshot's teams and usage:
//
//	tree, err := fairshare.NewTree(accounts)        // from the team list
//	tree = tree.WithMissing(jobTeams...)            // unknown teams: share 1
//	fs := tree.Factors(usage)                       // own usage per team
//	w := fairshare.Weights{}                        // defaults 1000/100/0
//	key := func(j Job) fairshare.JobFactors {
//		return fairshare.JobFactors{Tier: j.Tier, FairShare: fs.Value(j.Team, fairshare.FairTree),
//			Age: now.Sub(j.Submitted), GPUs: j.GPUs, ClusterGPUs: clusterGPUs}
//	}
//	slices.SortFunc(jobs, func(a, b Job) int {
//		if c := w.Compare(key(a), key(b)); c != 0 {
//			return c
//		}
//		return strings.Compare(a.ID, b.ID)
//	})
//
// and before placing a job of a team with a quota:
//
//	if ok, why := quota.AdmitTeam(team, inUse, job.GPUs, idle); !ok {
//		// the job waits with reason "quota" and message why
//	}
//
// A host that tracks usage itself keeps a [Ledger] across steps, charges
// each finished (or running) interval with [Ledger.Add], and passes
// [Ledger.OwnUsage] to [Tree.Factors].
//
// # Complexity
//
// For n accounts and depth d: [NewTree] is O(n log n); [Ledger.Add] is O(d)
// (one record per account, nothing per event); [Ledger.Usage] is O(1);
// [Tree.Factors] is O(n log n); [Weights.Priority], [Weights.Compare] and
// [Quota.Admit] are O(1). Memory is O(n).
package fairshare
