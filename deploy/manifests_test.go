// Package deploy holds no code: its tests keep the container image's
// recipe (Dockerfile) and the Kubernetes manifests (kubernetes/) true to
// what a run split over pods needs, without a cluster or a Docker daemon,
// and the Grafana dashboard (grafana/) true to the metrics the exporter
// serves, without a Grafana or a Prometheus. The Kubernetes API types they
// decode with are the tests' only: the binary links none of them.
package deploy

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The files the checks below single out, in kubernetes/.
const (
	partJobFile = "job.yaml"     // the Indexed Job whose pods run the parts
	collectFile = "collect.yaml" // the Job that merges their documents
)

// partFlag is the --part value a pod of the Indexed Job computes, before
// "/n": the Job controller numbers pods from 0, parts from 1.
const partFlag = "$((JOB_COMPLETION_INDEX+1))"

// kinds are the API types the manifests may hold, by apiVersion and kind.
var kinds = map[string]func() any{
	"batch/v1 Job":             func() any { return new(batchv1.Job) },
	"apps/v1 StatefulSet":      func() any { return new(appsv1.StatefulSet) },
	"v1 Service":               func() any { return new(corev1.Service) },
	"v1 Secret":                func() any { return new(corev1.Secret) },
	"v1 PersistentVolumeClaim": func() any { return new(corev1.PersistentVolumeClaim) },
}

// TestManifests: every document of kubernetes/*.yaml decodes strictly into
// its Kubernetes type, and the Jobs hold what a split run needs; and the
// same files, each doctored in one place that matters, fail.
func TestManifests(t *testing.T) {
	files := readDir(t, "kubernetes", "*.yaml")
	if len(files) == 0 {
		t.Fatal("no manifests in kubernetes/")
	}
	if problems := checkManifests(files); len(problems) > 0 {
		t.Fatalf("the manifests:\n%s", strings.Join(problems, "\n"))
	}
	caught(t, files, checkManifests, []doctoring{
		{partJobFile, "completionMode: Indexed", "completionsMode: Indexed", `unknown field "completionsMode"`},
		{partJobFile, "completionMode: Indexed", "completionMode: NonIndexed", "completionMode NonIndexed, not Indexed"},
		{partJobFile, "parallelism: 4", "parallelism: 3", "completions 4 and parallelism 3 differ"},
		{partJobFile, "--part " + partFlag + "/4 ", "", "runs no --part " + partFlag + "/4"},
		{partJobFile, "--part " + partFlag + "/4 ", "--part " + partFlag + "/3 ", "runs no --part " + partFlag + "/4"},
		{partJobFile, "backoffLimitPerIndex: 0", "backoffLimit: 0", "backoffLimitPerIndex is not 0"},
		{partJobFile, "key: password", "key: pasword", `reads key "pasword" of secret dbrig-target, which has no such key`},
		{partJobFile, "name: PGPASSWORD", "name: PGPASS", "PGPASSWORD is not the Secret's password"},
		{partJobFile, "--json /results/part-", "--json /tmp/part-", "writes --json /tmp/part-$((JOB_COMPLETION_INDEX+1)).json, not on a volume"},
		{collectFile, "kind: Job", "kinds: Job", "batch/v1 (no kind) is not a kind this test knows"},
		{collectFile, "claimName: dbrig-results", "claimName: results", `claim "results", which no manifest makes`},
		{collectFile, "/dbrig merge /results/part-*.json", "/dbrig merge /results/*.json", "merges no /results/part-*.json"},
	})
}

// TestDockerfile: the image's build stage builds `make static` without cgo,
// whose recipe uses no build tag, and the image it ships is a static base
// with the shell the Jobs run; and the doctored recipes fail.
func TestDockerfile(t *testing.T) {
	files := readDir(t, ".", "Dockerfile")
	maps.Copy(files, readDir(t, "..", "Makefile"))
	check := func(f map[string]string) []string { return checkImage(f["Dockerfile"], f["Makefile"]) }
	if problems := check(files); len(problems) > 0 {
		t.Fatalf("the image's recipe:\n%s", strings.Join(problems, "\n"))
	}
	caught(t, files, check, []doctoring{
		{"Dockerfile", "ENV CGO_ENABLED=0\n", "", "the build stage does not set CGO_ENABLED=0"},
		{"Dockerfile", "static-debian13:debug-nonroot", "base-debian13:debug-nonroot", "not a distroless static :debug base"},
		{"Dockerfile", "static-debian13:debug-nonroot", "static-debian13:nonroot", "not a distroless static :debug base"},
		{"Dockerfile", "\tmake static", "\tmake build", "no build stage runs make static"},
		{"Dockerfile", "USER 65532:65532", "USER nonroot", "runs as root, or as a user named"},
		{"Dockerfile", "USER 65532:65532", "USER 0", "runs as root, or as a user named"},
		{"Makefile", "CGO_ENABLED=0 $(GO) build -trimpath", "$(GO) build -trimpath", "make static builds with cgo"},
		{"Makefile", "CGO_ENABLED=0 $(GO) build -trimpath", "CGO_ENABLED=0 $(GO) build -tags $(TAGS) -trimpath", "make static builds with -tags"},
	})
}

// TestBinaryLinksNoKubernetes: the Kubernetes modules the tests above
// decode with are theirs alone; the dbrig binary links none of them.
func TestBinaryLinksNoKubernetes(t *testing.T) {
	kube := func(args ...string) []string {
		out, err := exec.Command("go", append([]string{"list", "-deps"}, args...)...).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", strings.Join(args, " "), err)
		}
		return slices.DeleteFunc(strings.Fields(string(out)), func(p string) bool {
			return !strings.HasPrefix(p, "k8s.io/") && !strings.HasPrefix(p, "sigs.k8s.io/")
		})
	}
	if got := kube("../cmd/dbrig"); len(got) > 0 {
		t.Errorf("the binary links %s", strings.Join(got, ", "))
	}
	// The same list for this package's tests names them, so the one above
	// would.
	if got := kube("-test", "."); !slices.Contains(got, "k8s.io/api/batch/v1") {
		t.Errorf("go list -deps -test names no k8s.io/api/batch/v1 for deploy's tests: %v", got)
	}
}

// doctoring is one place of a file changed, and the line the check must
// then say.
type doctoring struct{ file, old, new, want string }

// caught: check, run on files with each doctoring applied alone, says a
// line holding its want.
func caught(t *testing.T, files map[string]string, check func(map[string]string) []string, cases []doctoring) {
	t.Helper()
	for _, c := range cases {
		doctored := maps.Clone(files)
		if !strings.Contains(doctored[c.file], c.old) {
			t.Fatalf("%q is not in %s", c.old, c.file)
		}
		doctored[c.file] = strings.Replace(doctored[c.file], c.old, c.new, 1)
		got := check(doctored)
		if !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, c.want) }) {
			t.Errorf("%s with %q for %q: the check says\n%s\nwant a line with %q", c.file, c.new, c.old, strings.Join(got, "\n"), c.want)
		}
	}
}

// readDir reads the files of dir that match pattern, by base name.
func readDir(t *testing.T, dir, pattern string) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(n)] = string(b)
	}
	return files
}

// manifest is one document of a file, decoded into its API type.
type manifest struct {
	file string
	obj  any
}

// typeMeta is what a document says it is.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// decode splits a file into its YAML documents and decodes each strictly
// (an unknown or duplicated field fails) into the type of its kind.
func decode(file, text string) ([]manifest, error) {
	var out []manifest
	for i, doc := range splitDocuments(text) {
		var v any
		if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
			return nil, fmt.Errorf("%s, document %d: %v", file, i+1, err)
		}
		if v == nil {
			continue // comments only
		}
		var head typeMeta
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return nil, fmt.Errorf("%s, document %d: %v", file, i+1, err)
		}
		newObj, ok := kinds[head.APIVersion+" "+head.Kind]
		if !ok {
			return nil, fmt.Errorf("%s, document %d: %s %s is not a kind this test knows", file, i+1, head.APIVersion, cmp.Or(head.Kind, "(no kind)"))
		}
		obj := newObj()
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			return nil, fmt.Errorf("%s, document %d: %v", file, i+1, err)
		}
		out = append(out, manifest{file: file, obj: obj})
	}
	return out, nil
}

// splitDocuments splits a YAML stream at its "---" lines.
func splitDocuments(text string) []string {
	var docs []string
	var cur strings.Builder
	for line := range strings.Lines(text) {
		if strings.TrimRight(line, " \r\n") == "---" {
			docs = append(docs, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteString(line)
	}
	return append(docs, cur.String())
}

// cluster is what the manifests make that others refer to.
type cluster struct {
	secrets map[string][]string // Secret name → its keys
	claims  map[string]bool     // PersistentVolumeClaim names
}

// checkManifests decodes every file and returns what is wrong with them,
// a line each.
func checkManifests(files map[string]string) []string {
	var problems []string
	var all []manifest
	for _, name := range slices.Sorted(maps.Keys(files)) {
		ms, err := decode(name, files[name])
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		all = append(all, ms...)
	}
	if len(problems) > 0 {
		return problems
	}
	c := cluster{secrets: map[string][]string{}, claims: map[string]bool{}}
	for _, m := range all {
		switch o := m.obj.(type) {
		case *corev1.Secret:
			c.secrets[o.Name] = slices.Concat(slices.Collect(maps.Keys(o.StringData)), slices.Collect(maps.Keys(o.Data)))
		case *corev1.PersistentVolumeClaim:
			c.claims[o.Name] = true
		}
	}
	jobs := map[string]*batchv1.Job{}
	for _, m := range all {
		switch o := m.obj.(type) {
		case *batchv1.Job:
			jobs[m.file] = o
			problems = append(problems, c.checkPod(m.file, o.Spec.Template.Spec, nil)...)
		case *appsv1.StatefulSet:
			problems = append(problems, c.checkPod(m.file, o.Spec.Template.Spec, o.Spec.VolumeClaimTemplates)...)
		}
	}
	part, collect := jobs[partJobFile], jobs[collectFile]
	if part == nil || collect == nil {
		return append(problems, fmt.Sprintf("%s and %s must each hold a Job", partJobFile, collectFile))
	}
	problems = append(problems, checkPartJob(part)...)
	return append(problems, checkCollect(collect, part)...)
}

// checkPod: every Secret key the pod's containers read exists, every
// volume claim is one the manifests make, and every mount names a volume.
func (c cluster) checkPod(file string, pod corev1.PodSpec, templates []corev1.PersistentVolumeClaim) []string {
	var problems []string
	volumes := map[string]bool{}
	for _, t := range templates {
		volumes[t.Name] = true
	}
	for _, v := range pod.Volumes {
		volumes[v.Name] = true
		if pvc := v.PersistentVolumeClaim; pvc != nil && !c.claims[pvc.ClaimName] {
			problems = append(problems, fmt.Sprintf("%s: volume %s mounts claim %q, which no manifest makes", file, v.Name, pvc.ClaimName))
		}
	}
	for _, ctr := range pod.Containers {
		for _, e := range ctr.Env {
			if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
				continue
			}
			ref := e.ValueFrom.SecretKeyRef
			if keys, ok := c.secrets[ref.Name]; !ok {
				problems = append(problems, fmt.Sprintf("%s: $%s reads secret %s, which no manifest makes", file, e.Name, ref.Name))
			} else if !slices.Contains(keys, ref.Key) {
				problems = append(problems, fmt.Sprintf("%s: $%s reads key %q of secret %s, which has no such key", file, e.Name, ref.Key, ref.Name))
			}
		}
		for _, m := range ctr.VolumeMounts {
			if !volumes[m.Name] {
				problems = append(problems, fmt.Sprintf("%s: container %s mounts %s, which is not a volume of its pod", file, ctr.Name, m.Name))
			}
		}
	}
	return problems
}

// checkPartJob: the Job runs n pods at once in Indexed mode, each `dbrig
// run` as part $((JOB_COMPLETION_INDEX+1))/n under the Job's name, never
// started again, reading the target and its password from a Secret, and
// writing its document to the results volume.
func checkPartJob(job *batchv1.Job) []string {
	problems := []string{}
	bad := func(format string, a ...any) {
		problems = append(problems, partJobFile+": "+fmt.Sprintf(format, a...))
	}
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		bad("completionMode %s, not Indexed", deref(s.CompletionMode))
	}
	n := deref(s.Completions)
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism || *s.Completions < 1 {
		bad("completions %s and parallelism %s differ: every part must run at once", deref(s.Completions), deref(s.Parallelism))
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 0 {
		bad("backoffLimitPerIndex is not 0: a failed part would start again, alone")
	}
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		bad("restartPolicy %q, not Never", s.Template.Spec.RestartPolicy)
	}
	ctr, words, err := dbrigCommand(s.Template.Spec, "run")
	if err != nil {
		bad("%v", err)
		return problems
	}
	want := map[string]string{
		"--part":     partFlag + "/" + n,
		"--part-run": job.Name,
		"--target":   `"$DBRIG_TARGET"`,
	}
	for _, f := range slices.Sorted(maps.Keys(want)) {
		if flagValue(words, f) != want[f] {
			bad("runs no %s %s", f, want[f])
		}
	}
	if out := flagValue(words, "--json"); path.Base(out) != "part-"+partFlag+".json" || resultsClaim(s.Template.Spec, ctr, out) == "" {
		bad("writes --json %s, not on a volume as part-%s.json", out, partFlag)
	}
	for name, key := range map[string]string{"DBRIG_TARGET": "url", "PGPASSWORD": "password"} {
		if secretKey(ctr, name) != key {
			bad("$%s is not the Secret's %s", name, key)
		}
	}
	return problems
}

// checkCollect: the collector merges the parts' documents from the volume
// the parts wrote them to.
func checkCollect(collect, part *batchv1.Job) []string {
	ctr, words, err := dbrigCommand(collect.Spec.Template.Spec, "merge")
	if err != nil {
		return []string{collectFile + ": " + err.Error()}
	}
	pctr, pwords, err := dbrigCommand(part.Spec.Template.Spec, "run")
	if err != nil {
		return nil // checkPartJob says so
	}
	partOut := flagValue(pwords, "--json")
	want := path.Join(path.Dir(partOut), "part-*.json")
	if len(words) < 3 || words[2] != want {
		return []string{fmt.Sprintf("%s: merges no %s, where %s writes the parts", collectFile, want, partJobFile)}
	}
	claim := resultsClaim(part.Spec.Template.Spec, pctr, partOut)
	if got := resultsClaim(collect.Spec.Template.Spec, ctr, want); claim == "" || got != claim {
		return []string{fmt.Sprintf("%s: reads %s from claim %q, the parts write to claim %q", collectFile, want, got, claim)}
	}
	return nil
}

// dbrigCommand finds the pod's container that runs `/dbrig VERB` (through
// a shell's -c or directly), and the words it runs from /dbrig on.
func dbrigCommand(pod corev1.PodSpec, verb string) (corev1.Container, []string, error) {
	for _, ctr := range pod.Containers {
		words := strings.Fields(strings.Join(slices.Concat(ctr.Command, ctr.Args), " "))
		for i := range words {
			if words[i] == "/dbrig" && i+1 < len(words) && words[i+1] == verb {
				return ctr, words[i:], nil
			}
		}
	}
	return corev1.Container{}, nil, errors.New("no container runs /dbrig " + verb)
}

// flagValue is the word after flag, or "".
func flagValue(words []string, flag string) string {
	if i := slices.Index(words, flag); i >= 0 && i+1 < len(words) {
		return words[i+1]
	}
	return ""
}

// resultsClaim is the claim of the volume ctr has mounted at file's
// directory, or "".
func resultsClaim(pod corev1.PodSpec, ctr corev1.Container, file string) string {
	for _, m := range ctr.VolumeMounts {
		if path.Clean(m.MountPath) != path.Dir(file) {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.PersistentVolumeClaim != nil {
				return v.PersistentVolumeClaim.ClaimName
			}
		}
	}
	return ""
}

// secretKey is the key of the Secret ctr's $name reads, or "".
func secretKey(ctr corev1.Container, name string) string {
	for _, e := range ctr.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			return e.ValueFrom.SecretKeyRef.Key
		}
	}
	return ""
}

func deref[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// stage is one FROM of a Dockerfile and its instructions, each one line
// (continuations joined), without comments.
type stage struct {
	from, name string
	lines      []string
}

// parseDockerfile splits a Dockerfile into its stages.
func parseDockerfile(text string) []stage {
	var stages []stage
	text = strings.ReplaceAll(text, "\\\n", " ")
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if strings.EqualFold(f[0], "FROM") && len(f) >= 2 {
			s := stage{from: f[1]}
			if len(f) == 4 && strings.EqualFold(f[2], "AS") {
				s.name = f[3]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) > 0 {
			stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, strings.Join(f, " "))
		}
	}
	return stages
}

// checkImage: a build stage sets CGO_ENABLED=0 and runs `make static`, whose
// recipe builds without cgo and without tags; the image is that binary on
// distroless's static base, in a :debug tag (the Jobs' /busybox/sh), as a
// user id that is not root's.
func checkImage(docker, makefile string) []string {
	var problems []string
	stages := parseDockerfile(docker)
	if len(stages) < 2 {
		return []string{"Dockerfile: want a build stage and the image's"}
	}
	build := slices.IndexFunc(stages, func(s stage) bool {
		return slices.ContainsFunc(s.lines, func(l string) bool { return strings.HasPrefix(l, "RUN") && strings.HasSuffix(l, " make static") })
	})
	switch {
	case build < 0:
		problems = append(problems, "Dockerfile: no build stage runs make static")
	case !slices.Contains(stages[build].lines, "ENV CGO_ENABLED=0"):
		problems = append(problems, "Dockerfile: the build stage does not set CGO_ENABLED=0")
	}
	img := stages[len(stages)-1]
	if base, tag, _ := strings.Cut(img.from, ":"); !strings.HasPrefix(base, "gcr.io/distroless/static-") || !strings.HasPrefix(tag, "debug") {
		problems = append(problems, fmt.Sprintf("Dockerfile: the image's base %s is not a distroless static :debug base", img.from))
	}
	if build >= 0 && !slices.Contains(img.lines, "COPY --from="+stages[build].name+" /src/bin/dbrig-static /dbrig") {
		problems = append(problems, "Dockerfile: the image does not copy the build stage's bin/dbrig-static to /dbrig")
	}
	if !nonRootUser(img.lines) {
		problems = append(problems, "Dockerfile: the image runs as root, or as a user named, not numbered (runAsNonRoot cannot check a name)")
	}
	if !slices.Contains(img.lines, `ENTRYPOINT ["/dbrig"]`) {
		problems = append(problems, `Dockerfile: the image's ENTRYPOINT is not ["/dbrig"]`)
	}
	return append(problems, checkStaticRecipe(makefile)...)
}

// nonRootUser: the stage's last USER is a user id other than root's.
func nonRootUser(lines []string) bool {
	user := ""
	for _, l := range lines {
		if u, ok := strings.CutPrefix(l, "USER "); ok {
			user, _, _ = strings.Cut(u, ":")
		}
	}
	uid, err := strconv.Atoi(user)
	return err == nil && uid > 0
}

// checkStaticRecipe: the Makefile's static target builds ./cmd/dbrig into
// bin/dbrig-static without cgo and without build tags.
func checkStaticRecipe(makefile string) []string {
	var recipe []string
	in := false
	for line := range strings.Lines(makefile) {
		switch {
		case strings.HasPrefix(line, "static:"):
			in = true
		case in && strings.HasPrefix(line, "\t"):
			recipe = append(recipe, strings.TrimSpace(line))
		default:
			in = false
		}
	}
	if len(recipe) != 1 {
		return []string{"Makefile: static has " + strconv.Itoa(len(recipe)) + " recipe lines, want one go build"}
	}
	words := strings.Fields(recipe[0])
	var problems []string
	if words[0] != "CGO_ENABLED=0" {
		problems = append(problems, "Makefile: make static builds with cgo: "+recipe[0])
	}
	if slices.Contains(words, "-tags") {
		problems = append(problems, "Makefile: make static builds with -tags: "+recipe[0])
	}
	if flagValue(words, "-o") != "bin/dbrig-static" || words[len(words)-1] != "./cmd/dbrig" {
		problems = append(problems, "Makefile: make static does not build ./cmd/dbrig into bin/dbrig-static")
	}
	return problems
}
