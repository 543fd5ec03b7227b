package scheduler

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/gpusched/gpusched/fairshare"
	"github.com/gpusched/gpusched/preempt"
)

// policyFile is a policy file as read: every key of the JSON form, with
// the defaults of the keys left out applied.
type policyFile struct {
	backfill          BackfillMode
	reservations      int
	enforceTimeLimits bool
	backfillOrder     BackfillOrder
	fairShare         FairShare
	matrix            preempt.Matrix
	disablePreemption bool
	maxEvictedGPUs    int
	minRuntime        time.Duration
	horizon           time.Duration
	order             string // "" for the default
}

// The checks of a policy file's values that are read as strings or kept
// as text, in the order in which they are made.
const (
	polBackfill = iota
	polBackfillOrder
	polHalfLife
	polAgeMax
	polHorizon
	polMatrix
	polMinRuntime
)

// DecodeConfig reads a policy file, the JSON form of a [Config], and
// returns the scheduling policy it describes. It reads at most
// [MaxDocumentBytes].
//
// All keys are optional: "backfill" ("easy", the default,
// "conservative" or "none"), "reservations" (K for EASY backfill, 0
// meaning 1), "enforceTimeLimits" (default true: false sets
// Config.IgnoreTimeLimits), "backfillOrder" ("priority", the default, or
// "shortest"), "fairshare" {"halfLife", "ageMax" (Go durations),
// "weights" {"fairshare", "age", "size"}} (a weight left out of
// "weights" keeps its default: fairshare 1000, age 100, size 0; one given
// as 0 is 0), "preemption"
// {"matrix": rows of true/false or 1/0, row = preemptor tier, column =
// victim tier; "disabled": true or false; "maxEvictedGPUs": the
// disruption budget of a Step, Config.MaxEvictedGPUs, 0 for the default;
// "minRuntime": a Go duration, Config.MinRuntime}, "horizon" (a Go duration) and
// "order" ("multifactor", the default, or "tier" for [TierOrder]).
//
// A key left out takes its default, while a key given as null is an
// error ("config: backfill: want a string, got null"). Unknown or
// repeated keys, trailing data, input that is not UTF-8 (or escapes half
// a surrogate pair), unknown enum strings, bad or negative durations,
// negative weights or reservations and a matrix that is not square (or
// that lets a tier preempt itself or tier 0, or two tiers preempt each
// other) are errors on one line that start with "config: " and name the
// key and where it is ("config: json: unknown field \"x\"",
// "config: fairshare.weights: unknown field \"tier\"",
// "config: fairshare.halfLife: bad duration \"1x\"").
func DecodeConfig(r io.Reader) (Config, error) {
	data, err := readDocument(r, "config", configErr, MaxDocumentBytes)
	if err != nil {
		return Config{}, err
	}
	p, err := decodePolicyData(data)
	if err != nil {
		return Config{}, clipErr(err)
	}
	cfg, err := p.config()
	return cfg, clipErr(err)
}

// decodePolicyData decodes the policy document data.
func decodePolicyData(data []byte) (policyFile, error) {
	if err := encodingError(configErr, data); err != nil {
		return policyFile{}, err
	}
	r := newJSONReader(data, configErr)
	p := policyFile{enforceTimeLimits: true}
	if err := r.document(data, func() error { return r.policy(&p) }); err != nil {
		return policyFile{}, err
	}
	if r.semErr != nil {
		return policyFile{}, r.semErr
	}
	return p, nil
}

// policyKeys are the keys of a policy file.
var policyKeys = []string{"backfill", "reservations", "enforceTimeLimits", "backfillOrder", "fairshare",
	"preemption", "horizon", "order"}

// policy reads a policy file's object into p.
func (r *jsonReader) policy(p *policyFile) error {
	_, err := r.object(policyKeys, func(f int) error { return r.policyValue(p, f) })
	return err
}

// policyValue reads the value of field f of a policy file into p.
func (r *jsonReader) policyValue(p *policyFile, f int) error {
	var err error
	var i int
	var ok bool
	switch f {
	case 0:
		if i, ok, err = r.enum(polBackfill, "backfill", backfillNames); ok {
			p.backfill = BackfillMode(i)
		}
	case 1:
		_, err = r.integer(&p.reservations)
	case 2:
		_, err = r.boolean(&p.enforceTimeLimits)
	case 3:
		if i, ok, err = r.enum(polBackfillOrder, "backfillOrder", orderNames); ok {
			p.backfillOrder = BackfillOrder(i)
		}
	case 4:
		err = r.fairShare(&p.fairShare)
	case 5:
		err = r.preemption(p)
	case 6:
		err = r.durationValue(polHorizon, "horizon", &p.horizon)
	case 7:
		_, err = r.str(&p.order) // checked by config
	}
	return err
}

// fairShare reads the "fairshare" object.
func (r *jsonReader) fairShare(fs *FairShare) error {
	_, err := r.object([]string{"halfLife", "weights", "ageMax"}, func(f int) error {
		switch f {
		case 0:
			return r.durationValue(polHalfLife, "fairshare.halfLife", &fs.HalfLife)
		case 1:
			return r.weights(&fs.Weights)
		}
		return r.durationValue(polAgeMax, "fairshare.ageMax", &fs.Weights.AgeMax)
	})
	return err
}

// weights reads the "weights" object: the weights it gives, the defaults
// for the others.
// A value that is not an object leaves the document in error, so the
// defaults are set before it is read.
func (r *jsonReader) weights(w *fairshare.Weights) error {
	w.Explicit = true
	w.FairShare, w.Age, w.Size = fairshare.DefaultFairShareWeight, fairshare.DefaultAgeWeight, fairshare.DefaultSizeWeight
	dst := [...]*float64{&w.FairShare, &w.Age, &w.Size}
	_, err := r.object([]string{"fairshare", "age", "size"}, func(f int) error {
		_, err := r.number(dst[f])
		return err
	})
	return err
}

// preemption reads the "preemption" object.
func (r *jsonReader) preemption(p *policyFile) error {
	_, err := r.object([]string{"matrix", "disabled", "maxEvictedGPUs", "minRuntime"}, func(f int) error {
		var err error
		switch f {
		case 0:
			p.matrix, err = r.matrix()
		case 1:
			_, err = r.boolean(&p.disablePreemption)
		case 2:
			_, err = r.integer(&p.maxEvictedGPUs)
		case 3:
			err = r.durationValue(polMinRuntime, "preemption.minRuntime", &p.minRuntime)
		}
		return err
	})
	return err
}

// matrix reads a preemption matrix: an array of arrays whose cells are
// true, false, 1 or 0; another cell is an invalid value.
func (r *jsonReader) matrix() (preempt.Matrix, error) {
	if ok, err := r.open('[', "an array"); !ok {
		return nil, err
	}
	m := preempt.Matrix{}
	for i := 0; ; i++ {
		more, err := r.more()
		if err != nil || !more {
			return m, err
		}
		r.pushIndex(i, false)
		ok, err := r.open('[', "an array")
		r.pop()
		if err != nil {
			return m, err
		}
		row := []bool{}
		for k := 0; ok; k++ {
			if more, err := r.more(); err != nil || !more {
				if err != nil {
					return m, err
				}
				break
			}
			cell, err := r.read()
			if err != nil {
				return m, err
			}
			switch string(cell) {
			case "true", "1":
				row = append(row, true)
			case "false", "0":
				row = append(row, false)
			default:
				row = append(row, false)
				r.semantic(polMatrix, fmt.Sprintf("preemption.matrix[%d][%d]", i, k),
					"want true, false, 1 or 0, got "+clip(string(cell)))
			}
		}
		m = append(m, row)
	}
}

// config checks p and returns the scheduling policy it describes.
func (p policyFile) config() (Config, error) {
	modes := Config{Backfill: p.backfill, BackfillOrder: p.backfillOrder, FairShare: p.fairShare}
	if err := modes.checkModes(); err != nil {
		return Config{}, err
	}
	if p.reservations < 0 {
		return Config{}, configErr("reservations", fmt.Sprintf("must be >= 0, got %d", p.reservations))
	}
	if p.fairShare.HalfLife < 0 {
		return Config{}, configErr("fairshare.halfLife", fmt.Sprintf("must be >= 0, got %s", formatDuration(p.fairShare.HalfLife)))
	}
	w := p.fairShare.Weights
	if w.AgeMax < 0 {
		return Config{}, configErr("fairshare.ageMax", fmt.Sprintf("must be >= 0, got %s", formatDuration(w.AgeMax)))
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"fairshare", w.FairShare}, {"age", w.Age}, {"size", w.Size}} {
		if x.v < 0 || math.IsNaN(x.v) || math.IsInf(x.v, 0) {
			return Config{}, configErr("fairshare.weights."+x.name, fmt.Sprintf("must be a finite number >= 0, got %v", x.v))
		}
	}
	if math.IsInf(w.FairShare+w.Age+w.Size, 1) {
		return Config{}, configErr("fairshare.weights", fmt.Sprintf("must sum to a finite number, got fairshare %v + age %v + size %v", w.FairShare, w.Age, w.Size))
	}
	if p.horizon < 0 {
		return Config{}, configErr("horizon", fmt.Sprintf("must be >= 0, got %s", formatDuration(p.horizon)))
	}
	if p.maxEvictedGPUs < 0 {
		return Config{}, configErr("preemption.maxEvictedGPUs", fmt.Sprintf("must be >= 0, got %d", p.maxEvictedGPUs))
	}
	if p.minRuntime < 0 {
		return Config{}, configErr("preemption.minRuntime", fmt.Sprintf("must be >= 0, got %s", formatDuration(p.minRuntime)))
	}
	if p.matrix != nil {
		if err := p.matrix.Validate(); err != nil {
			return Config{}, fmt.Errorf("config: preemption.%w", err)
		}
	}
	var order Orderer
	if p.order != "" {
		q, ok := enumIndex(queueNames, []byte(p.order))
		if !ok {
			return Config{}, configErr("order", unknownEnum(p.order, queueNames))
		}
		if queueNames[q] == "tier" {
			order = TierOrder{}
		}
	}
	return Config{
		Order:             order,
		Backfill:          p.backfill,
		Reservations:      p.reservations,
		IgnoreTimeLimits:  !p.enforceTimeLimits,
		BackfillOrder:     p.backfillOrder,
		FairShare:         p.fairShare,
		Preemption:        p.matrix,
		DisablePreemption: p.disablePreemption,
		MaxEvictedGPUs:    p.maxEvictedGPUs,
		MinRuntime:        p.minRuntime,
		Horizon:           p.horizon,
	}, nil
}
