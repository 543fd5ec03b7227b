package e2e

import (
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/rest"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startEtcd runs a single-member etcd inside the test process and returns
// its client URL.
func startEtcd(t testing.TB) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "error"
	cu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	cfg.ListenClientUrls = []url.URL{*cu}
	cfg.AdvertiseClientUrls = []url.URL{*cu}
	cfg.ListenPeerUrls = []url.URL{*pu}
	cfg.AdvertisePeerUrls = []url.URL{*pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		e.Close()
		t.Fatal("etcd did not become ready")
	}
	t.Cleanup(e.Close)
	return cu.String()
}

// startAPIServer starts etcd and a real kube-apiserver and returns a client
// configuration for it.
func startAPIServer(t testing.TB) *rest.Config {
	t.Helper()
	etcdURL := startEtcd(t)
	sc := storagebackend.NewDefaultConfig("/registry", nil)
	sc.Transport.ServerList = []string{etcdURL}
	srv := kubeapiservertesting.StartTestServerOrDie(t, nil, []string{
		"--endpoint-reconciler-type=none",
		"--disable-admission-plugins=ServiceAccount",
	}, sc)
	t.Cleanup(srv.TearDownFn)
	cfg := rest.CopyConfig(srv.ClientConfig)
	cfg.QPS = -1
	return cfg
}

func TestHarnessStarts(t *testing.T) {
	cfg := startAPIServer(t)
	if cfg.Host == "" {
		t.Fatal("no host")
	}
}
