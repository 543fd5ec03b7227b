package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/examples/kubescheduler/adapter"
	"github.com/gpusched/gpusched/examples/kubescheduler/controller"
	v1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// installPodGroupCRD installs a minimal scheduling.x-k8s.io/v1alpha1
// PodGroup CRD (spec.minMember), as scheduler-plugins does.
func (e *env) installPodGroupCRD() {
	e.t.Helper()
	ax, err := apiextensions.NewForConfig(e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "podgroups.scheduling.x-k8s.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "scheduling.x-k8s.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "podgroups", Singular: "podgroup", Kind: "PodGroup", ListKind: "PodGroupList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
	e.must(ax.ApiextensionsV1().CustomResourceDefinitions().Create(e.ctx, crd, metav1.CreateOptions{}))
	e.waitFor("the PodGroup API served", 30*time.Second, func() bool {
		_, err := e.admin.Discovery().ServerResourcesForGroupVersion("scheduling.x-k8s.io/v1alpha1")
		return err == nil
	})
}

// A gang from a PodGroup waits until minMember pods exist, then binds
// whole.
func TestPodGroupGang(t *testing.T) {
	e := newEnv(t)
	e.installPodGroupCRD()
	e.mkNodes("n", 4, uniform(8))
	dyn, err := dynamic.NewForConfig(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	pg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
		"metadata": map[string]any{"name": "train", "namespace": "team-a"},
		"spec":     map[string]any{"minMember": int64(3)},
	}}
	e.must(dyn.Resource(controller.PodGroupGVR).Namespace("team-a").Create(e.ctx, pg, metav1.CreateOptions{}))
	e.start("", controller.Options{PodGroups: "auto"})
	member := func(i int) *v1.Pod {
		p := gpuPod("team-a", fmt.Sprintf("w-%d", i), 8)
		p.Labels[adapter.LabelPodGroup] = "train"
		return p
	}
	e.create(member(0), member(1))
	e.waitFor("the incomplete gang told why it waits", 30*time.Second, func() bool {
		c := condition(e.pod("team-a", "w-1"))
		return c != nil && c.Reason == adapter.ReasonGangIncomplete
	})
	if c := condition(e.pod("team-a", "w-1")); !strings.Contains(c.Message, "has 2 of its 3 members") {
		t.Errorf("w-1 waits with %q, want the count against minMember", c.Message)
	}
	if n, _ := bound(e.pods("team-a"), "w-"); n != 0 {
		t.Fatalf("%d members bound before minMember exist", n)
	}
	e.create(member(2))
	e.waitFor("the gang bound", 30*time.Second, func() bool { n, _ := bound(e.pods("team-a"), "w-"); return n == 3 })
	e.checkNoOverbooking(8, "team-a")
}
