package experiment_test

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/dbrig/dbrig/internal/dbtarget/postgres"
	_ "github.com/dbrig/dbrig/internal/dbtarget/sqlite"
	"github.com/dbrig/dbrig/internal/experiment"
	"github.com/dbrig/dbrig/internal/server"
	_ "github.com/dbrig/dbrig/internal/server/mariadb"
	_ "github.com/dbrig/dbrig/internal/server/postgres"
	_ "github.com/dbrig/dbrig/internal/workload/blockio"
	_ "github.com/dbrig/dbrig/internal/workload/cpu"
	_ "github.com/dbrig/dbrig/internal/workload/dvdstore"
	_ "github.com/dbrig/dbrig/internal/workload/tprocc"
)

const good = `name: buffer-cache
target: {managed: true, settings: {max_connections: 100}}
workload: tproc-c
build: {warehouses: 8}
run: {rampup: 20s, duration: 60s, mode: procs}
vary:
  shared_buffers: [128MB, 256MB, 1GB, 2GB]
  vus: [2, 4]
baseline: {shared_buffers: 128MB}
repeat: 3
`

func TestSpecParse(t *testing.T) {
	s, err := experiment.Parse("buffer-cache.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "buffer-cache" || !s.Target.Managed || s.Target.Server != "postgres" || s.Workload != "tproc-c" || s.Repeat != 3 {
		t.Errorf("spec %+v", s)
	}
	if got := strings.Join(s.Varied(), ","); got != "shared_buffers,vus" {
		t.Errorf("varied %s, want the YAML order shared_buffers,vus", got)
	}
	if s.Vary[0].Kind != experiment.ServerParam || s.Vary[1].Kind != experiment.RunParam {
		t.Errorf("kinds %v %v, want server, run", s.Vary[0].Kind, s.Vary[1].Kind)
	}
	// The spec kept in the sweep document reads back as the same spec.
	back, err := experiment.Parse("sweep.json", s.JSON())
	if err != nil {
		t.Fatalf("%v\n%s", err, s.JSON())
	}
	if string(back.JSON()) != string(s.JSON()) {
		t.Errorf("round trip:\n%s\nvs\n%s", back.JSON(), s.JSON())
	}
}

// TestSpecManagedKinds: `managed: true` from before there were kinds
// means postgres, and reads back from the sweep document as the kind.
func TestSpecManagedKinds(t *testing.T) {
	for _, managed := range []string{"true", "postgres"} {
		s, err := experiment.Parse("x.yaml", []byte("target: {managed: "+managed+"}\nworkload: tproc-c\nvary: {prewarm: [none, full]}\n"))
		if err != nil {
			t.Fatalf("managed: %s: %v", managed, err)
		}
		if !s.Target.Managed || s.Target.Server != "postgres" {
			t.Errorf("managed: %s: target %+v", managed, s.Target)
		}
		if !strings.Contains(string(s.JSON()), `"managed": "postgres"`) {
			t.Errorf("managed: %s: JSON %s", managed, s.JSON())
		}
	}
	// A PostgreSQL URL can prewarm as well as a managed server.
	if _, err := experiment.Parse("x.yaml", []byte("target: {url: 'postgres://localhost/x'}\nworkload: tproc-c\nvary: {prewarm: [none, full]}\n")); err != nil {
		t.Errorf("prewarm on a PostgreSQL URL: %v", err)
	}
}

// TestShippedExperiments: the studies in experiments/ parse.
func TestShippedExperiments(t *testing.T) {
	files, err := filepath.Glob("../../experiments/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no experiments found: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := experiment.Parse(f, data)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if !s.Target.Managed || s.Target.Server == "" {
			t.Errorf("%s: target %+v, want a managed server", f, s.Target)
		}
	}
}

func TestSpecDefaults(t *testing.T) {
	s, err := experiment.Parse("x.yaml", []byte("target: {url: 'sqlite:x.db'}\nworkload: tproc-c\nvary: {vus: [1, 2]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Repeat != 1 || s.Name != "sweep" {
		t.Errorf("repeat %d name %q, want 1 and sweep", s.Repeat, s.Name)
	}
	var run []string
	for _, p := range s.Run {
		run = append(run, p.Name+"="+p.Value)
	}
	if got := strings.Join(run, " "); got != "rampup=10s duration=60s connections=0" {
		t.Errorf("run defaults %q", got)
	}
}

// Specs a test reads: an external target, a managed one, and one with
// two builds of the server, to append a section to.
const (
	extSpec     = "name: x\ntarget: {url: 'sqlite:x.db'}\nworkload: tproc-c\n"
	managedSpec = "name: x\ntarget: {managed: true}\nworkload: tproc-c\n"
	buildsSpec  = "name: x\ntarget: {managed: postgres, servers: {pg15: /a, pg18: /b}}\nworkload: tproc-c\n"
)

// specErrors are specs that Parse refuses, each with its message.
var specErrors = []struct{ name, yaml, want string }{
	{"unknown top-level key", managedSpec + "repaet: 3\n",
		`s.yaml line 4: unknown key "repaet" at the top level (known: name, target, workload, build, run, vary, follow, baseline, repeat, with, thresholds)`},
	{"unknown nested key", managedSpec + "run:\n  rampup: 1s\n  duraton: 60s\n",
		`s.yaml line 6: unknown key "duraton" in run (known: rampup, duration, vus, connections, client_cpus, sample, lost_after, failover_at, switchover_at, max_retries, retry_backoff, retry_backoff_max, isolation, node_affinity, stall_after, prewarm, audit_durability, all_warehouses, keying_thinking, mode, terminals_per_warehouse)`},
	{"unknown target key", "target: {managed: true, setings: {a: b}}\nworkload: tproc-c\n",
		`s.yaml line 1: unknown key "setings" in target (known: managed, settings, pg_bin, servers, memory, cpus, url, replicas, sync_replicas, nodes, ha, replica_delay, ttl, loop_wait)`},
	{"bad memory", "target:\n  managed: true\n  memory: 2 gigs\nworkload: tproc-c\n",
		`s.yaml line 3: target.memory: want a size such as 512MB, 2GB or 1.5GiB, got "2 gigs"`},
	{"bad cpus", "target: {managed: true, cpus: 0-}\nworkload: tproc-c\n",
		`s.yaml line 1: target.cpus: want a CPU list such as 0, 0-1 or 0,2, got "0-"`},
	{"offline cpu in vary", managedSpec + "vary:\n  cpus: [0, 4095]\n",
		`s.yaml line 5: vary.cpus: CPU 4095 is not online (online: ` + onlineCPUs() + `)`},
	{"bad memory in vary", managedSpec + "vary:\n  vus: [1, 2]\n  memory: [1GB, 2XB]\n",
		`s.yaml line 6: vary.memory: want a size such as 512MB, 2GB or 1.5GiB, got "2XB"`},
	{"memory in target and vary", "target: {managed: true, memory: 1GB}\nworkload: tproc-c\nvary:\n  memory: [1GB, 2GB]\n",
		`s.yaml line 4: memory is both in target and in vary: keep it in one place`},
	{"memory on an external target", extSpec + "vary:\n  memory: [1GB, 2GB]\n",
		`s.yaml line 5: memory confines a server dbrig starts; only a managed target (target: {managed: postgres}) can vary it`},
	{"cpus on an external target", "target: {url: 'sqlite:x.db', cpus: 0}\nworkload: tproc-c\n",
		`s.yaml line 1: target: memory and cpus confine a server dbrig starts; only a managed target (target: {managed: postgres}) can have them`},
	{"unknown build key", managedSpec + "build: {warehouses: 1, wharehouses: 2}\n",
		`s.yaml line 4: unknown key "wharehouses" in build (known: loaders, seed, warehouses)`},
	{"wrong type: repeat", managedSpec + "repeat: three\n",
		`s.yaml line 4: repeat: want a whole number of at least 1, got "three"`},
	{"unknown server kind", "target: {managed: yes please}\nworkload: tproc-c\n",
		`s.yaml line 1: target.managed: unknown server kind "yes please" (known: mariadb, postgres)`},
	{"wrong type: managed", "target: {managed: [postgres]}\nworkload: tproc-c\n",
		`s.yaml line 1: target.managed: want a server kind (mariadb, postgres), got a list`},
	{"wrong type: run as a list", managedSpec + "run: [1s]\n",
		`s.yaml line 4: run: want a mapping (key: value ...), got a list`},
	{"wrong type: vus", managedSpec + "run: {vus: four}\n",
		`s.yaml line 4: run.vus: want a whole number, got "four"`},
	{"wrong type: duration", managedSpec + "run:\n  duration: 60\n",
		`s.yaml line 5: run.duration: want a duration such as 30s or 5m, got "60"`},
	{"wrong type: workload flag", managedSpec + "vary:\n  all_warehouses: [false, maybe]\n",
		`s.yaml line 5: vary.all_warehouses: want true or false, got "maybe"`},
	{"wrong type: build flag", managedSpec + "build: {warehouses: 2.5}\n",
		`s.yaml line 4: build.warehouses: want a whole number, got "2.5"`},
	{"vary not a list", managedSpec + "vary:\n  vus: 4\n",
		`s.yaml line 5: vary.vus: want a list of values, got "4"`},
	{"empty vary list", managedSpec + "vary:\n  shared_buffers: []\n",
		`s.yaml line 5: vary.shared_buffers: the list of values is empty`},
	{"a value over two lines", managedSpec + "vary: {vus: [1, 2]}\nbaseline: {vus: \"1\\n2\"}\n",
		`s.yaml line 5: baseline: vus=1\n2 is not among the varied values (1, 2)`},
	{"baseline not varied", managedSpec + "vary: {vus: [1, 2]}\nbaseline: {shared_buffers: 128MB}\n",
		`s.yaml line 5: baseline: shared_buffers is not a varied parameter (varied: vus)`},
	{"baseline not among values", managedSpec + "vary:\n  shared_buffers: [128MB, 1GB]\nbaseline: {shared_buffers: 256MB}\n",
		`s.yaml line 6: baseline: shared_buffers=256MB is not among the varied values (128MB, 1GB)`},
	{"url and managed", "target: {managed: true, url: 'sqlite:x.db'}\nworkload: tproc-c\n",
		`s.yaml line 1: target: give either url or managed, not both`},
	{"neither url nor managed", "target: {}\nworkload: tproc-c\n",
		`s.yaml line 1: target: give managed: postgres (dbrig starts its own server) or url: ...`},
	{"server setting on an external target", extSpec + "vary:\n  vus: [1, 2]\n  shared_buffers: [128MB, 1GB]\n",
		`s.yaml line 6: shared_buffers is a server setting; only a managed target (target: {managed: postgres}) can vary it`},
	{"settings on an external target", "target: {url: 'sqlite:x.db', settings: {shared_buffers: 1GB}}\nworkload: tproc-c\n",
		`s.yaml line 1: target.settings: shared_buffers is a server setting; only a managed target (target: {managed: postgres}) can set it`},
	{"prewarm on SQLite", extSpec + "vary:\n  prewarm: [none, full]\n",
		`s.yaml line 5: vary.prewarm: a full-cache warm-up needs a target that can prewarm its cache (postgres)`},
	{"prewarm value", managedSpec + "vary:\n  prewarm: [none, some]\n",
		`s.yaml line 5: vary.prewarm: want none or full, got "some"`},
	{"build parameter varied", managedSpec + "vary:\n  warehouses: [1, 2]\n",
		`s.yaml line 5: warehouses is a build parameter: the schema is built once per sweep, so it cannot vary`},
	{"duplicate key", managedSpec + "repeat: 2\nrepeat: 3\n",
		`s.yaml line 5: duplicate key "repeat" in the spec`},
	{"unknown workload", "target: {managed: true}\nworkload: tpcc\n",
		`s.yaml line 2: unknown workload "tpcc" (known: block-io, cpu, dvd-reports, dvd-store, tproc-c)`},
	{"missing workload", "target: {managed: true}\n",
		`s.yaml line 1: missing key "workload" (known: block-io, cpu, dvd-reports, dvd-store, tproc-c)`},
	{"follow an unvaried parameter", managedSpec + "vary: {vus: [1, 2]}\nfollow:\n  memory: {shared_buffers: [1GB, 2GB]}\n",
		`s.yaml line 6: follow.memory: shared_buffers is not a varied parameter (varied: vus)`},
	{"follow with too few values", managedSpec + "vary: {shared_buffers: [64MB, 1GB]}\nfollow:\n  memory: {shared_buffers: [1GB]}\n",
		`s.yaml line 6: follow.memory: 1 values for the 2 of shared_buffers: give one for each`},
	{"follow and vary", managedSpec + "vary: {shared_buffers: [64MB, 1GB], memory: [1GB, 2GB]}\nfollow:\n  memory: {shared_buffers: [1GB, 2GB]}\n",
		`s.yaml line 6: memory both varies and follows: keep it in one place`},
	{"follow two leaders", managedSpec + "vary: {shared_buffers: [64MB, 1GB], vus: [1, 2]}\nfollow:\n  memory: {shared_buffers: [1GB, 2GB], vus: [1GB, 2GB]}\n",
		`s.yaml line 6: follow.memory: name one varied parameter it follows`},
	{"bad following memory", managedSpec + "vary: {shared_buffers: [64MB, 1GB]}\nfollow:\n  memory: {shared_buffers: [1GB, lots]}\n",
		`s.yaml line 6: follow.memory: want a size such as 512MB, 2GB or 1.5GiB, got "lots"`},
	{"server not among the builds", buildsSpec + "vary:\n  server: [pg15, pg17]\n",
		`s.yaml line 5: vary.server: pg17 is not a build in target.servers (pg15, pg18)`},
	{"server without builds", managedSpec + "vary:\n  server: [pg15, pg18]\n",
		`s.yaml line 5: vary.server: name the builds first, in target: {servers: {NAME: BIN_DIR, ...}}`},
	{"server on an external target", extSpec + "vary:\n  server: [pg15, pg18]\n",
		`s.yaml line 5: server picks the binaries of a server dbrig starts; only a managed target (target: {managed: postgres}) can vary it`},
	{"servers on an external target", "target: {url: 'sqlite:x.db', servers: {pg15: /a}}\nworkload: tproc-c\n",
		`s.yaml line 1: target.servers names builds of a server dbrig starts; only a managed target (managed: postgres) can have them`},
	{"servers and pg_bin", "target: {managed: postgres, pg_bin: /a, servers: {pg15: /a}}\nworkload: tproc-c\n",
		`s.yaml line 1: target: give pg_bin (one build) or servers (several), not both`},
	{"servers not varied", "target:\n  managed: postgres\n  servers: {pg15: /a, pg18: /b}\nworkload: tproc-c\nvary: {vus: [1, 2]}\n",
		`s.yaml line 3: target.servers: nothing varies server; add vary: {server: [...]}, or give one build as pg_bin`},
	{"server name not a directory's", "target:\n  managed: postgres\n  servers:\n    pg15: /a\n    ../x: /b\nworkload: tproc-c\n",
		`s.yaml line 5: target.servers: "../x": name a build with letters, digits, '.', '_' and '-' only`},
	{"servers empty", "target:\n  managed: postgres\n  servers: {}\nworkload: tproc-c\n",
		`s.yaml line 3: target.servers: name at least one build (NAME: BIN_DIR, or NAME: {managed: KIND, bin: BIN_DIR, settings: {...}})`},
	{"servers not a mapping", "target:\n  managed: postgres\n  servers: [/a, /b]\nworkload: tproc-c\n",
		`s.yaml line 3: target.servers: want a mapping (key: value ...), got a list`},
	{"server baseline not a build", buildsSpec + "vary: {server: [pg15, pg18]}\nbaseline: {server: pg16}\n",
		`s.yaml line 5: baseline: server=pg16 is not among the varied values (pg15, pg18)`},
	{"too many runs: repeat", managedSpec + "repeat: 10001\n",
		`s.yaml line 4: repeat: 10001 runs of each point; at most 10000 runs in all`},
	{"too many runs: vary", managedSpec + "repeat: 3\nvary:\n  vus: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]\n  rampup: [1s, 2s, 3s, 4s, 5s, 6s, 7s, 8s, 9s, 10s, 11s, 12s, 13s, 14s, 15s, 16s, 17s, 18s, 19s, 20s]\n  duration: [1s, 2s, 3s, 4s, 5s, 6s, 7s, 8s, 9s]\n",
		`s.yaml line 8: vary.duration: the sweep would make more than 10000 runs (points times repeat); vary fewer values, or fewer parameters at once`},
	// A pool of sessions is checked at every point, as the runner will
	// check each run: at most a session per VU, and not beside with.
	{"connections over a point's vus", extSpec + "run: {connections: 4}\nvary: {vus: [8, 2]}\n",
		`s.yaml line 4: at the point vus=2: --connections 4 is more than --vus 2: a session is lent to one terminal at a time, so at most one each`},
	{"connections over the default vus", extSpec + "run: {connections: 5}\n",
		`s.yaml line 4: --connections 5 is more than --vus 4: a session is lent to one terminal at a time, so at most one each`},
	{"connections beside with", extSpec + "run: {vus: 20}\nvary: {connections: [0, 2]}\nwith: {tproc-c: 1}\n",
		`s.yaml line 5: at the point connections=2: --connections does not run beside --with yet: leave one of them out`},
	{"connections following over vus", extSpec + "vary: {vus: [4, 8]}\nfollow:\n  connections: {vus: [2, 9]}\n",
		`s.yaml line 6: at the point vus=8 connections=9: --connections 9 is more than --vus 8: a session is lent to one terminal at a time, so at most one each`},
	{"connections of a fixed amount of work", "name: x\ntarget: {url: 'sqlite:x.db'}\nworkload: cpu\nrun: {connections: 2}\n",
		`s.yaml line 4: run.connections: cpu runs a fixed amount of work, so connections does not apply (use its own parameters: arith, loops, repeat, sessions)`},
	// The durability audit: a workload with one, every run or none.
	{"audit of a workload without one", "name: x\ntarget: {url: 'sqlite:x.db'}\nworkload: cpu\nrun: {audit_durability: true}\n",
		`s.yaml line 4: run.audit_durability: cpu has no durability audit (the workloads with one: tproc-c)`},
	{"audit not a boolean", extSpec + "run: {audit_durability: yes please}\n",
		`s.yaml line 4: run.audit_durability: want true or false, got "yes please"`},
	{"audit varied", extSpec + "vary: {audit_durability: [false, true]}\n",
		`s.yaml line 4: vary.audit_durability: every run of a sweep is audited or none is: set it in run`},
	{"audit following", extSpec + "vary: {vus: [1, 2]}\nfollow:\n  audit_durability: {vus: [false, true]}\n",
		`s.yaml line 6: follow.audit_durability: every run of a sweep is audited or none is: set it in run`},
	{"not YAML", "target: {managed: true\n",
		`s.yaml: line 1: did not find expected ',' or '}'`},
}

func TestSpecErrors(t *testing.T) {
	for _, tc := range specErrors {
		t.Run(tc.name, func(t *testing.T) {
			_, err := experiment.Parse("s.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatalf("no error for\n%s", tc.yaml)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n  %s\nwant\n  %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is more than one line: %q", err)
			}
		})
	}
}

func onlineCPUs() string {
	cpus, err := server.OnlineCPUs()
	if err != nil {
		return err.Error()
	}
	return server.FormatCPUs(cpus)
}

const serversSpec = `target: {managed: postgres, servers: {pg15: /usr/lib/postgresql/15/bin, pg18: /opt/pg18/bin}}
workload: tproc-c
vary: {server: [pg15, pg18], vus: [1, 2]}
baseline: {server: pg15}
`

// TestSpecServers: vary.server picks each point's build from
// target.servers, restarts the server between builds, goes into no run's
// parameters, and keeps the builds in the spec the sweep document holds.
func TestSpecServers(t *testing.T) {
	s, err := experiment.Parse("x.yaml", []byte(serversSpec))
	if err != nil {
		t.Fatal(err)
	}
	points := s.Points()
	var got []string
	for _, p := range points {
		got = append(got, s.BuildOf(p))
		for _, r := range s.RunParams(p) {
			if r.Name == experiment.ServerKey {
				t.Errorf("point %s: server is among the run parameters %v", p.Label(), s.RunParams(p))
			}
		}
	}
	if strings.Join(got, " ") != "pg15 pg15 pg18 pg18" {
		t.Errorf("builds per point %v", got)
	}
	if b := s.BaselineOf(points, 3); b != 1 {
		t.Errorf("pg18 with 2 VUs is compared with point %d, want 1 (pg15, 2 VUs)", b)
	}
	// 4 runs, interleaved over two builds: every run changes the build or
	// the VUs, but only the build restarts the server.
	if n := s.Restarts(points, experiment.Order(len(points), 1)); n != 2 {
		t.Errorf("%d server starts, want 2 (one per build)", n)
	}
	back, err := experiment.Parse("x.json", s.JSON())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := builds(back.Target.Servers), builds(s.Target.Servers); got != want {
		t.Errorf("servers after the sweep document %s, want %s", got, want)
	}
}

// builds writes target.servers as one line, to compare.
func builds(bs []experiment.Build) string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name+"="+b.Kind+":"+b.Bin)
		for _, p := range b.Settings {
			out = append(out, p.Name+"="+p.Value)
		}
	}
	return strings.Join(out, " ")
}

const ownBuildsSpec = `target:
  managed: postgres
  settings: {max_connections: 50}
  servers:
    small: {managed: postgres, settings: {shared_buffers: 128MB}}
    big: {bin: /usr/lib/postgresql/15/bin, settings: {shared_buffers: 1GB, max_connections: 60}}
workload: tproc-c
vary: {server: [small, big]}
baseline: {server: small}
`

// TestSpecBuildsOfTheirOwn: a build may name its kind and settings of its
// own, on top of the target's; each point starts with its build's.
func TestSpecBuildsOfTheirOwn(t *testing.T) {
	s, err := experiment.Parse("x.yaml", []byte(ownBuildsSpec))
	if err != nil {
		t.Fatal(err)
	}
	points := s.Points()
	small, big := s.ServerSettings(points[0]), s.ServerSettings(points[1])
	if small["shared_buffers"] != "128MB" || small["max_connections"] != "50" || big["shared_buffers"] != "1GB" || big["max_connections"] != "60" {
		t.Errorf("settings %v and %v: want each build's on top of the target's", small, big)
	}
	if s.KindOf("big") != "postgres" || s.KindOf("small") != "postgres" || strings.Join(s.Target.Kinds(), ",") != "postgres" {
		t.Errorf("kinds %v: want postgres for both builds", s.Target.Kinds())
	}
	back, err := experiment.Parse("x.json", s.JSON())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := builds(back.Target.Servers), builds(s.Target.Servers); got != want {
		t.Errorf("servers after the sweep document %s, want %s", got, want)
	}
	for _, c := range []struct{ servers, want string }{
		{"{a: {managed: nosuch}}", `x.yaml line 1: target.servers.a.managed: unknown server kind "nosuch"`},
		{"{a: {bin: /x, port: 1}}", `unknown key "port" in target.servers.a (known: managed, bin, settings, replicas, sync_replicas, nodes, ha, replica_delay, ttl, loop_wait)`},
		{"{a: {settings: [1]}}", "target.servers.a.settings: want a mapping"},
		{"{a: [1]}", "target.servers.a: want a single value, got a list"},
	} {
		_, err := experiment.Parse("x.yaml", []byte("target: {managed: postgres, servers: "+c.servers+"}\nworkload: tproc-c\nvary: {server: [a]}\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("servers %s: error %v, want %q", c.servers, err, c.want)
		}
	}
}

const confinedSpec = `target: {managed: postgres, cpus: "0", settings: {shared_buffers: 128MB}}
workload: tproc-c
vary:
  memory: [1GB, 1.5GiB]
  vus: [1, 2]
`

// TestSpecConfinement: memory and cpus at the target's level hold for
// every point, varied ones per point, and both restart the server.
func TestSpecConfinement(t *testing.T) {
	s, err := experiment.Parse("x.yaml", []byte(confinedSpec))
	if err != nil {
		t.Fatal(err)
	}
	if s.Vary[0].Kind != experiment.ConfineParam {
		t.Errorf("vary.memory is kind %v, want ConfineParam", s.Vary[0].Kind)
	}
	points := s.Points()
	if got := s.Confinement(points[2]); got != (server.Confinement{Memory: 3 << 29, CPUs: "0"}) {
		t.Errorf("confinement of point 3 (%s): %+v", points[2].Label(), got)
	}
	for _, p := range s.RunParams(points[2]) {
		if p.Name == "memory" {
			t.Errorf("memory among the run parameters of point 3: %v", s.RunParams(points[2]))
		}
	}
	if n := s.Restarts(points, experiment.Order(len(points), 1)); n != 2 {
		t.Errorf("%d server starts, want 2: one per memory size", n)
	}
	back, err := experiment.Parse("sweep.json", s.JSON())
	if err != nil {
		t.Fatalf("%v\n%s", err, s.JSON())
	}
	if back.Target.Confinement != s.Target.Confinement || !strings.Contains(string(s.JSON()), `"cpus": "0"`) {
		t.Errorf("the spec in the sweep document reads back as %+v\n%s", back.Target.Confinement, s.JSON())
	}
}

const followSpec = `target: {managed: postgres}
workload: tproc-c
vary:
  shared_buffers: [64MB, 2GB]
  prewarm: [none, full]
follow:
  memory: {shared_buffers: [320MB, 2304MB]}
  effective_cache_size: {shared_buffers: [128MB, 2GB]}
  vus: {prewarm: [2, 4]}
baseline: {shared_buffers: 64MB, prewarm: none}
`

// TestSpecFollow: a following parameter takes the value that goes with
// its leader's at each point, without multiplying the points, and goes
// where its kind goes (memory to the confinement, a setting to the
// server, a run parameter to the run).
func TestSpecFollow(t *testing.T) {
	s, err := experiment.Parse("x.yaml", []byte(followSpec))
	if err != nil {
		t.Fatal(err)
	}
	points := s.Points()
	if len(points) != 4 {
		t.Fatalf("%d points, want 4: following parameters multiply nothing", len(points))
	}
	p := points[3] // shared_buffers=2GB prewarm=full
	if got := s.Confinement(p); got.Memory != 2304<<20 {
		t.Errorf("memory at %s: %d", p.Label(), got.Memory)
	}
	if got := s.ServerSettings(p); got["effective_cache_size"] != "2GB" || got["shared_buffers"] != "2GB" {
		t.Errorf("settings at %s: %v", p.Label(), got)
	}
	if got := s.Label(points[1]); got != "shared_buffers=64MB prewarm=full memory=320MB effective_cache_size=128MB vus=4" {
		t.Errorf("label %q", got)
	}
	var vus string
	for _, q := range s.RunParams(points[1]) {
		if q.Name == "vus" {
			vus = q.Value
		}
	}
	if vus != "4" {
		t.Errorf("vus at %s = %q, want 4: it follows prewarm", points[1].Label(), vus)
	}
	if n := s.Restarts(points, experiment.Order(len(points), 1)); n != 2 {
		t.Errorf("%d server starts, want 2", n)
	}
	back, err := experiment.Parse("sweep.json", s.JSON())
	if err != nil {
		t.Fatalf("%v\n%s", err, s.JSON())
	}
	if got := back.Label(points[3]); got != s.Label(points[3]) {
		t.Errorf("the spec in the sweep document reads back with %q, want %q", got, s.Label(points[3]))
	}
}

const clusterSpec = `target:
  managed: postgres
  replicas: 1
  servers:
    one: {replicas: 0}
    async: {}
    sync-5ms: {replicas: 1, sync_replicas: 1, replica_delay: 5ms}
    patroni: {replicas: 2, sync_replicas: 1, ha: patroni, ttl: 20s, loop_wait: 5s}
workload: tproc-c
run: {failover_at: 20s}
vary: {server: [one, async, sync-5ms, patroni]}
`

// TestSpecClusters: a target, or each of its builds, can be a cluster,
// which the spec kept in the sweep document keeps; a build without keys
// of its own takes the target's.
func TestSpecClusters(t *testing.T) {
	spec := strings.Replace(clusterSpec, "run: {failover_at: 20s}\n", "", 1)
	s, err := experiment.Parse("x.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]server.Topology{}
	for _, pt := range s.Points() {
		got[s.BuildOf(pt)] = s.TopologyOf(pt)
	}
	want := map[string]server.Topology{
		"one":      {},
		"async":    {Replicas: 1},
		"sync-5ms": {Replicas: 1, SyncReplicas: 1, ReplicaDelay: 5 * time.Millisecond},
		"patroni":  {Replicas: 2, SyncReplicas: 1, HA: "patroni", TTL: 20 * time.Second, LoopWait: 5 * time.Second},
	}
	if !maps.Equal(got, want) {
		t.Errorf("topologies %v, want %v", got, want)
	}
	back, err := experiment.Parse("x.json", s.JSON())
	if err != nil {
		t.Fatalf("the sweep document's spec: %v\n%s", err, s.JSON())
	}
	for _, pt := range back.Points() {
		if g := back.TopologyOf(pt); g != want[back.BuildOf(pt)] {
			t.Errorf("%s's topology read back from the sweep document: %v, want %v", back.BuildOf(pt), g, want[back.BuildOf(pt)])
		}
	}
	for _, c := range []struct{ spec, want string }{
		{clusterSpec, "failover_at changes a cluster's primary, and the run's server (at the point server=one) is one server"},
		{"target: {managed: mariadb, replicas: 2}\nworkload: tproc-c\n", "a mariadb cluster's nodes all take writes: give --nodes N"},
		{"target: {managed: postgres, nodes: 3}\nworkload: tproc-c\n", "--replicas N for a primary and its replicas"},
		{"target: {url: 'sqlite:x.db', replicas: 2}\nworkload: tproc-c\n", "only a managed target"},
		{"target: {managed: postgres, replicas: 1, sync_replicas: 2}\nworkload: tproc-c\n", "--sync-replicas 2: want from 0 to the 1 replicas"},
		{"target: {managed: postgres, replicas: two}\nworkload: tproc-c\n", "target.replicas: want a whole number"},
		{"target: {managed: postgres}\nworkload: tproc-c\nrun: {switchover_at: 5s}\n", "switchover_at changes a cluster's primary"},
	} {
		_, err := experiment.Parse("x.yaml", []byte(c.spec))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.spec, err, c.want)
		}
	}
}
