package scheduler

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gpusched/gpusched/topology"
)

// This file reads the documents a simulator or another host keeps apart
// from a snapshot: a cluster file (a snapshot's "cluster" object alone)
// and a teams file (a snapshot's "teams" array alone). Each is read and
// checked as the same part of a snapshot is.

// docErr returns the mkErr of a document kind: "DOC: FIELD: MSG", or
// "DOC: FIELD MSG" when MSG states a rule ("must ...", "is ...").
func docErr(doc string) mkErr {
	return func(field, msg string) error {
		if strings.HasPrefix(msg, "must ") || strings.HasPrefix(msg, "is ") {
			return fmt.Errorf("%s: %s %s", doc, field, msg)
		}
		return fmt.Errorf("%s: %s: %s", doc, field, msg)
	}
}

// DecodeCluster reads a cluster file: the JSON form of a
// [topology.Cluster], the "cluster" object of a snapshot
// ({"levels": [...], "nodes": [...]}, see [DecodeSnapshot]), as its own
// document. It reads at most [MaxDocumentBytes], decodes as strictly as
// [DecodeSnapshot] does (unknown or repeated keys, nulls, trailing data
// and unknown enum strings are errors) and validates the cluster with
// [topology.Cluster.Validate]. Errors are on one line, start with
// "cluster: " and name the field (`cluster: nodes[1] "n1": gpus: want an
// integer, got string`, `cluster: nodes[0] "n0": gpus must be in 1..64,
// got 0`).
func DecodeCluster(r io.Reader) (topology.Cluster, error) {
	mk := docErr("cluster")
	data, err := readDocument(r, "cluster", mk, MaxDocumentBytes)
	if err != nil {
		return topology.Cluster{}, err
	}
	c, err := decodeClusterData(data, mk)
	return c, clipErr(err)
}

func decodeClusterData(data []byte, mk mkErr) (topology.Cluster, error) {
	var c topology.Cluster
	if err := encodingError(mk, data); err != nil {
		return c, err
	}
	r := newJSONReader(data, mk)
	var nodes []jsontext.Value
	if err := r.document(data, func() error {
		_, err := r.object([]string{"levels", "nodes"}, func(f int) error {
			var err error
			if f == 0 {
				c.Levels, err = r.stringList(nil)
			} else {
				nodes, err = r.rawList(nil)
			}
			return err
		})
		return err
	}); err != nil {
		return c, err
	}
	if len(nodes) > 0 {
		c.Nodes = make([]topology.Node, len(nodes))
	}
	for i, raw := range nodes {
		r.readPart(raw, "nodes", i, "name")
		if err := r.node(&c.Nodes[i]); err != nil {
			return c, err
		}
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("cluster: %w", err)
	}
	return c, nil
}

// DecodeTeams reads a teams file: a JSON array of teams, the "teams"
// array of a snapshot as its own document ([{"name": "a", "share": 40,
// "usage": 0, "parent": "", "quota": {"gpus": 100, "borrowLimit": 20}}]),
// with the defaults and checks of [DecodeSnapshot] and [Validate] (names
// unique and non-empty, shares, usage and quotas not negative, parents
// known, the tree without cycles). It reads at most [MaxDocumentBytes].
// Errors are on one line, start with "teams: " and name the field
// (`teams: teams[1] "b": share must be >= 0, got -1`).
func DecodeTeams(r io.Reader) ([]Team, error) {
	mk := docErr("teams")
	data, err := readDocument(r, "teams", mk, MaxDocumentBytes)
	if err != nil {
		return nil, err
	}
	ts, err := decodeTeamsData(data, mk)
	return ts, clipErr(err)
}

func decodeTeamsData(data []byte, mk mkErr) ([]Team, error) {
	if err := encodingError(mk, data); err != nil {
		return nil, err
	}
	r := newJSONReader(data, mk)
	var raw []jsontext.Value
	if err := r.document(data, func() error {
		var err error
		raw, err = r.rawList(nil)
		return err
	}); err != nil {
		return nil, err
	}
	ts := make([]Team, len(raw))
	for i, v := range raw {
		r.readPart(v, "teams", i, "name")
		if err := r.team(&ts[i]); err != nil {
			return nil, err
		}
	}
	if err := validateTeams(ts); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			return nil, mk(ve.Field, ve.Msg)
		}
		return nil, err
	}
	return ts, nil
}
