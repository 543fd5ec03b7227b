package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpusched/gpusched/examples/kubescheduler/adapter"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// deployObjects decodes every document of deploy/*.yaml, strictly.
func deployObjects(t *testing.T) []runtime.Object {
	t.Helper()
	files, _ := filepath.Glob("deploy/*.yaml")
	if len(files) == 0 {
		t.Fatal("no deploy/*.yaml")
	}
	var out []runtime.Object
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufioReader(data))
		for {
			doc, err := r.Read()
			if err != nil {
				break
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			js, err := utilyaml.ToJSON(doc)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(js, nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out = append(out, obj)
		}
	}
	return out
}

func TestDeployManifests(t *testing.T) {
	var cm *v1.ConfigMap
	var dep *appsv1.Deployment
	verbs := map[string]bool{}
	for _, o := range deployObjects(t) {
		switch o := o.(type) {
		case *v1.ConfigMap:
			cm = o
		case *appsv1.Deployment:
			dep = o
		case *rbacv1.ClusterRole:
			for _, r := range o.Rules {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						verbs[res+":"+v] = true
					}
				}
			}
		case *rbacv1.Role:
			for _, r := range o.Rules {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						verbs[res+":"+v] = true
					}
				}
			}
		}
	}
	if cm == nil || dep == nil {
		t.Fatalf("configmap %v deployment %v", cm != nil, dep != nil)
	}
	if _, err := adapter.ParseConfig(cm.Data); err != nil {
		t.Errorf("the example ConfigMap does not parse: %v", err)
	}
	for _, need := range []string{"pods:watch", "pods/binding:create", "pods/eviction:create", "pods/status:patch", "nodes:watch",
		"events:create", "configmaps:watch", "configmaps:patch", "leases:update", "priorityclasses:watch", "podgroups:watch"} {
		if !verbs[need] {
			t.Errorf("RBAC lacks %s", need)
		}
	}
	// Every flag the Deployment passes is one the program knows.
	args := dep.Spec.Template.Spec.Containers[0].Args
	if err := parseOnly(args); err != nil {
		t.Errorf("deployment args %v: %v", args, err)
	}
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

func parseOnly(args []string) error {
	_, err := parseFlags(args)
	return err
}
