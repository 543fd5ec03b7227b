package adapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gpusched/gpusched/scheduler"
)

// Keys of the ConfigMap the scheduler reads.
const (
	// ConfigKey holds the host settings: teams, tiers, label keys (JSON,
	// see [Config]).
	ConfigKey = "config.json"
	// PolicyKey holds gpusched's policy file (DESIGN section 5), decoded
	// by scheduler.DecodeConfig.
	PolicyKey = "policy.json"
)

// Defaults of the label keys and resource name.
const (
	DefaultGPUResource  = "nvidia.com/gpu"
	DefaultGPUTypeLabel = "nvidia.com/gpu.product"
	DefaultCliqueLabel  = "nvidia.com/gpu.clique"
	DefaultZoneLabel    = "topology.kubernetes.io/zone"
)

// Pod labels and annotations the adapter reads.
const (
	// LabelPodGroup names the scheduler-plugins PodGroup of a pod (in the
	// pod's namespace).
	LabelPodGroup = "scheduling.x-k8s.io/pod-group"
	// LabelGang and LabelGangSize name a gang without the PodGroup CRD:
	// every member carries both, with the same size.
	LabelGang     = "gpusched.io/gang"
	LabelGangSize = "gpusched.io/gang-size"
	// AnnotationTimeLimit is a Go duration; without it the pod's
	// spec.activeDeadlineSeconds is its time limit, and without either it
	// runs until it ends by itself.
	AnnotationTimeLimit = "gpusched.io/time-limit"
	// AnnotationTopologyRequired and AnnotationTopologyPreferred name
	// topology levels (the "name" of a Level).
	AnnotationTopologyRequired  = "gpusched.io/topology-required"
	AnnotationTopologyPreferred = "gpusched.io/topology-preferred"
	// AnnotationPlacement is "pack" (default) or "spread";
	// AnnotationGroup names the replicas of one service for spread.
	AnnotationPlacement = "gpusched.io/placement"
	AnnotationGroup     = "gpusched.io/group"
)

// Level is one topology level: its name in gpusched and the node label
// that holds a node's domain of it.
type Level struct {
	Name  string `json:"name"`
	Label string `json:"label"`
}

// TeamConfig is one fair-share account.
type TeamConfig struct {
	Name   string           `json:"name"`
	Parent string           `json:"parent,omitempty"`
	Share  float64          `json:"share"`
	Quota  *scheduler.Quota `json:"quota,omitempty"`
}

// Config is the host part of the scheduler's ConfigMap (key config.json).
// Every key is optional; unknown keys are errors.
//
//	{
//	  "gpuResource": "nvidia.com/gpu",
//	  "gpuTypeLabel": "nvidia.com/gpu.product",
//	  "levels": [{"name": "zone", "label": "topology.kubernetes.io/zone"},
//	             {"name": "clique", "label": "nvidia.com/gpu.clique"}],
//	  "teamLabel": "",
//	  "teams": [{"name": "team-a", "share": 40, "quota": {"gpus": 100, "borrowLimit": 20}}],
//	  "tiers": {"production": 0, "high": 1, "normal": 2, "batch": 3},
//	  "defaultTier": -1
//	}
//
// Tiers maps a pod's spec.priorityClassName to a gpusched tier (0 is the
// highest). A pod whose class is not listed gets DefaultTier; a negative
// DefaultTier (the default) leaves the tier unset, which is the lowest
// tier of the policy. A pod's team is the value of its TeamLabel label
// when TeamLabel is set and the pod has it, else its namespace.
type Config struct {
	GPUResource  string         `json:"gpuResource"`
	GPUTypeLabel string         `json:"gpuTypeLabel"`
	Levels       []Level        `json:"levels"`
	TeamLabel    string         `json:"teamLabel"`
	Teams        []TeamConfig   `json:"teams"`
	Tiers        map[string]int `json:"tiers"`
	DefaultTier  *int           `json:"defaultTier"`

	// Policy is the decoded policy.json.
	Policy scheduler.Config `json:"-"`
}

// DefaultConfig is the configuration used when the ConfigMap is absent.
func DefaultConfig() *Config {
	return &Config{
		GPUResource:  DefaultGPUResource,
		GPUTypeLabel: DefaultGPUTypeLabel,
		Levels: []Level{
			{Name: "zone", Label: DefaultZoneLabel},
			{Name: "clique", Label: DefaultCliqueLabel},
		},
	}
}

// ParseConfig reads the ConfigMap's data. A missing key keeps the
// defaults; an error names the key and what is wrong with it.
func ParseConfig(data map[string]string) (*Config, error) {
	c := &Config{}
	if s, ok := data[ConfigKey]; ok && strings.TrimSpace(s) != "" {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.DisallowUnknownFields()
		if err := dec.Decode(c); err != nil {
			return nil, fmt.Errorf("%s: %v", ConfigKey, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s: trailing data after the JSON object", ConfigKey)
		}
	}
	d := DefaultConfig()
	if c.GPUResource == "" {
		c.GPUResource = d.GPUResource
	}
	if c.GPUTypeLabel == "" {
		c.GPUTypeLabel = d.GPUTypeLabel
	}
	if c.Levels == nil { // an empty list, [], is a flat cluster
		c.Levels = d.Levels
	}
	if s, ok := data[PolicyKey]; ok && strings.TrimSpace(s) != "" {
		p, err := scheduler.DecodeConfig(bytes.NewReader([]byte(s)))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", PolicyKey, err)
		}
		c.Policy = p
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%s: %v", ConfigKey, err)
	}
	return c, nil
}

func (c *Config) validate() error {
	seen := map[string]bool{}
	for i, l := range c.Levels {
		if l.Name == "" || l.Label == "" {
			return fmt.Errorf("levels[%d]: name and label must not be empty", i)
		}
		if seen[l.Name] {
			return fmt.Errorf("levels[%d]: level %q given twice", i, l.Name)
		}
		seen[l.Name] = true
	}
	tiers := c.tiers()
	for name, t := range c.Tiers {
		if t < 0 || t >= tiers {
			return fmt.Errorf("tiers[%q]: tier must be in 0..%d, got %d", name, tiers-1, t)
		}
	}
	if c.DefaultTier != nil && *c.DefaultTier >= tiers {
		return fmt.Errorf("defaultTier: must be below %d, got %d", tiers, *c.DefaultTier)
	}
	names := map[string]bool{}
	for i, t := range c.Teams {
		if t.Name == "" {
			return fmt.Errorf("teams[%d]: name must not be empty", i)
		}
		if names[t.Name] {
			return fmt.Errorf("teams[%d]: team %q given twice", i, t.Name)
		}
		names[t.Name] = true
	}
	return nil
}

// tiers is the number of tiers of the policy.
func (c *Config) tiers() int {
	switch {
	case c.Policy.Tiers > 0:
		return c.Policy.Tiers
	case c.Policy.Preemption != nil:
		return len(c.Policy.Preemption)
	}
	return scheduler.DefaultTiers
}
