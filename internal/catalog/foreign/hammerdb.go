package foreign

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbrig/dbrig/internal/catalog"
)

// HammerDB keeps every job in an SQLite file, its jobs database (hammer.DB
// in its TMP directory unless its commandline sqlite_db says otherwise):
// JOBMAIN has a row a job (jobid, db, bm, jobdict, timestamp, and in 4.x
// a profile_id), JOBOUTPUT each line a virtual user printed, and JOBTIMING,
// JOBTCOUNT, JOBMETRIC and JOBSYSTEM what the time profiler, the
// transaction counter, the CPU monitor and the host facts recorded, where
// they ran. Its results are in the output text alone, as HammerDB's own
// web service reads them.
const (
	hammerdbTool = "hammerdb"
	// hammerdbFormat versions the documents made here of a job.
	hammerdbFormat = 1
)

var sqliteHeader = []byte("SQLite format 3\x00")

// hdbDoc is one job as a document: the job's rows as HammerDB keeps them
// (less its charts and the passwords in its settings), and what its
// output says of it.
type hdbDoc struct {
	Tool   string    `json:"tool"`
	Format int       `json:"format"`
	Job    hdbJob    `json:"job"`
	Result hdbResult `json:"result"`
}

type hdbJob struct {
	ID        string `json:"jobid"`
	DB        string `json:"db"`
	BM        string `json:"bm"`
	Timestamp string `json:"timestamp"`
	ProfileID *int64 `json:"profile_id,omitempty"`
	// Dict is the job's settings, by section (connection, tpcc, tpch):
	// each a map of key to value, or the section's text where it is no
	// dictionary.
	Dict   map[string]any `json:"dict,omitempty"`
	Output []hdbLine      `json:"output"`
	Timing []row          `json:"timing,omitempty"`
	TCount []row          `json:"tcount,omitempty"`
	Metric []row          `json:"metric,omitempty"`
	System []row          `json:"system,omitempty"`
}

type hdbLine struct {
	VU   int64  `json:"vu"`
	Text string `json:"output"`
}

// row is a table's row by column, less its jobid.
type row map[string]any

// hdbResult is what the job's output says: its status, and the figures
// it printed.
type hdbResult struct {
	// Status is complete (a result was printed and no user failed), failed
	// (a virtual user finished failed) or "no result".
	Status    string   `json:"status"`
	NOPM      *float64 `json:"nopm,omitempty"`
	TPM       *float64 `json:"tpm,omitempty"`
	TPMOf     string   `json:"tpm_of,omitempty"`
	ActiveVUs *int64   `json:"active_vus,omitempty"`
	DBVersion string   `json:"db_version,omitempty"`
	// Geomean is the geometric mean, in seconds, of the first user's
	// query times that returned rows; QuerySets and QuerySetSeconds are
	// the query sets all users completed and the longest user's time.
	Geomean         *float64 `json:"geomean_s,omitempty"`
	QuerySets       *int64   `json:"query_sets,omitempty"`
	QuerySetSeconds *float64 `json:"query_set_s,omitempty"`
}

const (
	statusComplete = "complete"
	statusFailed   = "failed"
	statusNone     = "no result"
)

// splitHammerDB reads a HammerDB jobs database into a document a job.
// A schema build, check or delete is no result and is left out, and so
// is a run that has neither printed a result nor finished (it runs still,
// or HammerDB was stopped); a run that failed, or finished with no
// result, is kept, without metrics.
func splitHammerDB(path string, b []byte) ([][]byte, bool, error) {
	if !bytes.HasPrefix(b, sqliteHeader) {
		return nil, false, nil
	}
	driver := sqliteDriver()
	if driver == "" {
		return nil, false, errors.New("an SQLite file, and this dbrig has no SQLite driver to read it")
	}
	// The bytes given are what is read, in a copy opened read-only and
	// immutable, so that a file HammerDB is writing is neither locked nor
	// changed, and the documents are those of these bytes.
	f, err := os.CreateTemp("", "dbrig-hammerdb-*.db")
	if err != nil {
		return nil, false, err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, false, err
	}
	db, err := sql.Open(driver, "file:"+uriPath(f.Name())+"?mode=ro&immutable=1")
	if err != nil {
		return nil, false, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	tables, err := tableNames(ctx, db)
	if err != nil {
		return nil, false, fmt.Errorf("an SQLite file that cannot be read: %w", err)
	}
	if tables["jobmain"] == "" || tables["joboutput"] == "" {
		return nil, false, nil
	}
	docs, err := readJobs(ctx, db, tables)
	if err != nil {
		return nil, true, fmt.Errorf("a HammerDB jobs database that cannot be read: %w", err)
	}
	return docs, true, nil
}

// sqliteDriver is the SQLite driver the binary links in: mattn's where
// cgo builds it, modernc's where not.
func sqliteDriver() string {
	for _, d := range []string{"sqlite3", "sqlite"} {
		if slices.Contains(sql.Drivers(), d) {
			return d
		}
	}
	return ""
}

// uriPath is path as an SQLite file: URI's path.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// tableNames is the file's tables, by name in lower case (SQLite's names
// are not case-sensitive), each as it is spelt.
func tableNames(ctx context.Context, db *sql.DB) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out[strings.ToLower(n)] = n
	}
	return out, rows.Err()
}

func readJobs(ctx context.Context, db *sql.DB, tables map[string]string) ([][]byte, error) {
	mains, err := readRows(ctx, db, tables["jobmain"], "")
	if err != nil {
		return nil, err
	}
	var docs [][]byte
	for _, m := range mains {
		job := hdbJob{ID: str(m["jobid"]), DB: str(m["db"]), BM: str(m["bm"]), Timestamp: str(m["timestamp"])}
		if job.ID == "" {
			continue
		}
		if p, ok := m["profile_id"].(int64); ok {
			job.ProfileID = &p
		}
		job.Dict = parseJobDict(str(m["jobdict"]))
		out, err := readRows(ctx, db, tables["joboutput"], job.ID)
		if err != nil {
			return nil, err
		}
		for _, o := range out {
			vu, _ := o["vu"].(int64)
			job.Output = append(job.Output, hdbLine{VU: vu, Text: str(o["output"])})
		}
		if jobKind(job.Output) != "run" {
			continue
		}
		for _, t := range []struct {
			table string
			into  *[]row
		}{{"jobtiming", &job.Timing}, {"jobtcount", &job.TCount}, {"jobmetric", &job.Metric}, {"jobsystem", &job.System}} {
			if tables[t.table] == "" {
				continue
			}
			if *t.into, err = readRows(ctx, db, tables[t.table], job.ID); err != nil {
				return nil, err
			}
		}
		res := readResult(job)
		if res.Status == statusNone && !finished(job.Output) {
			// Running still, or cut off: nothing to chart, and a document
			// made now would differ from the one made when it ends.
			continue
		}
		doc := hdbDoc{Tool: hammerdbTool, Format: hammerdbFormat, Job: job, Result: res}
		b, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		docs = append(docs, b)
	}
	return docs, nil
}

// readRows is table's rows for jobid (all of them for ""), in the order
// they were written, each column as SQLite holds it: a date as its text,
// whatever the driver would make of it, so that every build reads a file
// into the same bytes.
func readRows(ctx context.Context, db *sql.DB, table, jobid string) ([]row, error) {
	cols, err := db.QueryContext(ctx, `SELECT name, type FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, err
	}
	var names, sel []string
	for cols.Next() {
		var name, typ string
		if err := cols.Scan(&name, &typ); err != nil {
			cols.Close()
			return nil, err
		}
		names = append(names, strings.ToLower(name))
		q := quoteIdent(name)
		if t := strings.ToUpper(typ); strings.Contains(t, "DATE") || strings.Contains(t, "TIME") {
			q = "CAST(" + q + " AS TEXT)"
		}
		sel = append(sel, q)
	}
	if err := errors.Join(cols.Err(), cols.Close()); err != nil {
		return nil, err
	}
	if !slices.Contains(names, "jobid") {
		return nil, fmt.Errorf("table %s has no jobid", table)
	}
	q := `SELECT ` + strings.Join(sel, ", ") + ` FROM ` + quoteIdent(table)
	var args []any
	if jobid != "" {
		q += ` WHERE jobid = ?`
		args = append(args, jobid)
	}
	rows, err := db.QueryContext(ctx, q+` ORDER BY rowid`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []row
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := row{}
		for i, n := range names {
			if n != "jobid" || jobid == "" {
				r[n] = plain(vals[i])
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// plain is a value as JSON writes it alike from either driver.
func plain(v any) any {
	switch x := v.(type) {
	case nil, int64, string, bool:
		return x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return x
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05")
	}
	return fmt.Sprint(v)
}

func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// jobKind is what HammerDB's own job list calls a job, from its first
// output: a schema build, check or delete asks its question there first.
func jobKind(out []hdbLine) string {
	for _, l := range out {
		if l.VU != 0 {
			continue
		}
		switch {
		case strings.Contains(l.Text, "Ready to create"):
			return "schema build"
		case strings.Contains(l.Text, "Do you want to delete"):
			return "schema delete"
		case strings.Contains(l.Text, "Do you want to check"):
			return "schema check"
		}
	}
	return "run"
}

// finished is whether HammerDB saw the job's users end.
func finished(out []hdbLine) bool {
	return slices.ContainsFunc(out, func(l hdbLine) bool {
		return l.VU == 0 && (strings.Contains(l.Text, "ALL VIRTUAL USERS COMPLETE") || strings.Contains(l.Text, "FINISHED FAILED"))
	})
}

var (
	// "TEST RESULT : System achieved 7455 NOPM from 17037 PostgreSQL TPM",
	// and before 4.0 the figures the other way round.
	reResult    = regexp.MustCompile(`achieved\s+([0-9]+)\s+NOPM\s+from\s+([0-9]+)\s+(.*?)\s*TPM`)
	reResultOld = regexp.MustCompile(`achieved\s+([0-9]+)\s+(.*?)\s*TPM\s+at\s+([0-9]+)\s+NOPM`)
	reActive    = regexp.MustCompile(`([0-9]+)\s+Active\s+(?:Virtual Users|Sessions)\s+configured`)
	reRunning   = regexp.MustCompile(`^Vuser\s+([0-9]+):RUNNING`)
	reQuerySets = regexp.MustCompile(`Completed\s+([0-9]+)\s+query set\(s\)\s+in\s+([0-9.]+)\s+seconds`)
	reNumber    = regexp.MustCompile(`[0-9]*\.?[0-9]+`)
)

// readResult is what the job's output says of it.
func readResult(job hdbJob) hdbResult {
	var r hdbResult
	failed := false
	running := map[string]bool{}
	var geomeanVU int64 = -1
	for _, l := range job.Output {
		for _, line := range strings.Split(l.Text, "\n") {
			line = strings.TrimSpace(line)
			switch {
			case l.VU == 0 && strings.Contains(line, "FINISHED FAILED"):
				failed = true
			case l.VU == 0:
				if m := reRunning.FindStringSubmatch(line); m != nil {
					running[m[1]] = true
				}
			case strings.HasPrefix(line, "DBVersion:") && r.DBVersion == "":
				if v := strings.TrimSpace(strings.TrimPrefix(line, "DBVersion:")); v != "NULL" {
					r.DBVersion = v
				}
			case strings.Contains(line, "TEST RESULT") && r.NOPM == nil:
				if m := reResult.FindStringSubmatch(line); m != nil {
					r.NOPM, r.TPM, r.TPMOf = atof(m[1]), atof(m[2]), m[3]
				} else if m := reResultOld.FindStringSubmatch(line); m != nil {
					r.NOPM, r.TPM, r.TPMOf = atof(m[3]), atof(m[1]), m[2]
				}
			case r.ActiveVUs == nil && reActive.MatchString(line):
				n, _ := strconv.ParseInt(reActive.FindStringSubmatch(line)[1], 10, 64)
				r.ActiveVUs = &n
			case strings.HasPrefix(line, "Geometric mean of query times") && (geomeanVU < 0 || l.VU < geomeanVU):
				if nums := reNumber.FindAllString(line, -1); len(nums) > 0 {
					r.Geomean, geomeanVU = atof(nums[len(nums)-1]), l.VU
				}
			default:
				if m := reQuerySets.FindStringSubmatch(line); m != nil {
					n, _ := strconv.ParseInt(m[1], 10, 64)
					r.QuerySets = ptrInt(cmp.Or(deref(r.QuerySets), 0) + n)
					if s := atof(m[2]); s != nil && (r.QuerySetSeconds == nil || *s > *r.QuerySetSeconds) {
						r.QuerySetSeconds = s
					}
				}
			}
		}
	}
	if r.ActiveVUs == nil && len(running) > 0 && r.QuerySets != nil {
		// An analytic run has no monitor: each user that ran is one.
		r.ActiveVUs = ptrInt(int64(len(running)))
	}
	switch {
	case failed:
		r.Status = statusFailed
	case r.NOPM != nil || r.Geomean != nil || r.QuerySets != nil:
		r.Status = statusComplete
	default:
		r.Status = statusNone
	}
	return r
}

func atof(s string) *float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func ptrInt(n int64) *int64 { return &n }

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// parseJobDict is the job's settings, a Tcl dictionary of dictionaries,
// less every password; nil where it is no dictionary.
func parseJobDict(s string) map[string]any {
	top, err := tclList(s)
	if err != nil || len(top)%2 != 0 || len(top) == 0 {
		return nil
	}
	out := map[string]any{}
	for i := 0; i < len(top); i += 2 {
		sub, err := tclList(top[i+1])
		if err != nil || len(sub)%2 != 0 {
			out[top[i]] = top[i+1]
			continue
		}
		m := map[string]string{}
		for j := 0; j < len(sub); j += 2 {
			if !secret(sub[j]) {
				m[sub[j]] = sub[j+1]
			}
		}
		out[top[i]] = m
	}
	return out
}

// secret is a setting that holds a password, which never leaves the
// jobs database.
func secret(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "pass") || strings.Contains(k, "pwd") || strings.Contains(k, "secret")
}

// tclList splits s as Tcl splits a list: words apart by white space, a
// word in braces taken as it is, one in quotes or bare with its
// backslashes read.
func tclList(s string) ([]string, error) {
	var out []string
	i := 0
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' }
	for {
		for i < len(s) && space(s[i]) {
			i++
		}
		if i >= len(s) {
			return out, nil
		}
		var word strings.Builder
		switch s[i] {
		case '{':
			depth, j := 1, i+1
			for ; j < len(s) && depth > 0; j++ {
				switch s[j] {
				case '\\':
					j++
				case '{':
					depth++
				case '}':
					depth--
				}
			}
			if depth > 0 || j > len(s) {
				return nil, errors.New("unmatched open brace in list")
			}
			word.WriteString(s[i+1 : j-1])
			i = j
		case '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
					word.WriteByte(unescape(s[j]))
					continue
				}
				word.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, errors.New("unmatched open quote in list")
			}
			i = j + 1
		default:
			for ; i < len(s) && !space(s[i]); i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
					word.WriteByte(unescape(s[i]))
					continue
				}
				word.WriteByte(s[i])
			}
		}
		if i < len(s) && !space(s[i]) {
			return nil, errors.New("list element in braces or quotes followed by a character")
		}
		out = append(out, word.String())
	}
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	}
	return c
}

func matchHammerDB(b []byte) bool {
	m, ok := object(b, `"hammerdb"`)
	if !ok {
		return false
	}
	var tool string
	return json.Unmarshal(m["tool"], &tool) == nil && tool == hammerdbTool && m["job"] != nil
}

// indexHammerDB reads a job's document into its entry, with dbrig's own
// names where they mean the same: tproc-c's nopm and tpm, the config's
// vus, warehouses, rampup and duration.
func indexHammerDB(b []byte) (*catalog.Entry, error) {
	var d hdbDoc
	if err := decode(b, &d); err != nil {
		return nil, fmt.Errorf("not a HammerDB job this dbrig reads: %w", err)
	}
	if d.Format != hammerdbFormat {
		return nil, errField("HammerDB job", "format", fmt.Sprintf("is %d, not %d: a newer dbrig made it", d.Format, hammerdbFormat))
	}
	j := d.Job
	if j.ID == "" || j.BM == "" {
		return nil, errField("HammerDB job", "jobid and bm", "are missing")
	}
	bench := strings.ToLower(strings.ReplaceAll(j.BM, "TPROC", "TPC"))
	section := strings.ReplaceAll(bench, "-", "")
	e := &catalog.Entry{
		Kind: catalog.KindRun, Workload: workloadOf(j.BM), TargetKind: targetKind(j.DB),
		TargetVersion: d.Result.DBVersion, Name: j.ID, StartedAt: jobStart(j),
		Config: map[string]string{"hammerdb.status": d.Result.Status},
	}
	for sec, v := range j.Dict {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				if s, ok := val.(string); ok && !secret(k) {
					e.Config[sec+"."+k] = s
				}
			}
		case string:
			e.Config[sec] = x
		}
	}
	setting := func(sec, name string) (string, bool) {
		m, _ := j.Dict[sec].(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if s, ok := m[k].(string); ok && (k == name || strings.HasSuffix(k, "_"+name)) {
				return s, true
			}
		}
		return "", false
	}
	minutes := func(key, name string) (float64, bool) {
		s, ok := setting(section, name)
		f, err := strconv.ParseFloat(s, 64)
		if !ok || err != nil || f < 0 || f > 1e6 {
			return 0, false
		}
		e.Config[key] = (time.Duration(f * float64(time.Minute))).String()
		return f, true
	}
	if v, ok := setting(section, "count_ware"); ok {
		e.Config["warehouses"] = v
	}
	if v, ok := setting(section, "scale_fact"); ok {
		e.Config["scale_factor"] = v
	}
	if v, ok := setting(section, "allwarehouse"); ok {
		e.Config["all_warehouses"] = v
	}
	if v, ok := setting(section, "keyandthink"); ok {
		e.Config["keying_thinking"] = v
	}
	if v, ok := setting(section, "driver"); ok {
		e.Config["hammerdb.driver"] = v
	}
	minutes("rampup", "rampup")
	if d, ok := minutes("duration", "duration"); ok && bench == "tpc-c" {
		e.Seconds = d * 60
	}
	if j.ProfileID != nil {
		e.Config["hammerdb.profile_id"] = strconv.FormatInt(*j.ProfileID, 10)
	}
	r := d.Result
	if r.ActiveVUs != nil {
		e.Config["vus"] = strconv.FormatInt(*r.ActiveVUs, 10)
	}
	if host, ok := setting("connection", "host"); ok && host != "" {
		if port, ok := setting("connection", "port"); ok {
			user, _ := setting(section, "user")
			dbname, _ := setting(section, "dbase")
			if user != "" {
				user += "@"
			}
			e.TargetURL = e.TargetKind + "://" + user + host + ":" + port + "/" + dbname
		}
	}
	for _, s := range j.System {
		if h, ok := s["hostname"].(string); ok && h != "" {
			e.Host = h
			break
		}
	}
	switch bench {
	case "tpc-c":
		e.Primary = "nopm"
	case "tpc-h":
		e.Primary = "geomean_s"
	}
	if r.Status != statusComplete {
		// A run with no result measured nothing (and what a failed run
		// printed is not its figures).
		e.Seconds = 0
		return e, nil
	}
	switch bench {
	case "tpc-c":
		if r.NOPM != nil && r.TPM != nil {
			// Both are the database's counts: New-Orders from the districts'
			// next order numbers, transactions from its commit counters.
			e.Metrics = append(e.Metrics,
				catalog.Metric{Key: "nopm", Label: "NOPM", Unit: "New-Orders per minute", Higher: true, Value: *r.NOPM, DB: ptr(*r.NOPM)},
				catalog.Metric{Key: "tpm", Label: "TPM", Unit: "transactions per minute", Higher: true, Value: *r.TPM, DB: ptr(*r.TPM)})
		}
		for _, t := range j.Timing {
			if s, _ := t["summary"].(float64); s != 1 {
				continue
			}
			if p, ok := t["procname"].(string); !ok || p != "NEWORD" {
				continue
			}
			if v, ok := t["p95_ms"].(float64); ok && v >= 0 && len(e.Metrics) > 0 {
				e.Metrics = append(e.Metrics, catalog.Metric{Key: "latency.p95_ms", Label: "NEWORD p95", Unit: "ms", Value: v})
			}
		}
	case "tpc-h":
		if r.QuerySetSeconds != nil {
			e.Seconds = *r.QuerySetSeconds
		}
		if r.Geomean != nil {
			e.Metrics = append(e.Metrics, catalog.Metric{Key: "geomean_s", Label: "Geomean", Unit: "s", Value: *r.Geomean, Client: ptr(*r.Geomean)})
		}
		if r.QuerySetSeconds != nil {
			e.Metrics = append(e.Metrics, catalog.Metric{Key: "query_set_s", Label: "Query set", Unit: "s", Value: *r.QuerySetSeconds, Client: ptr(*r.QuerySetSeconds)})
		}
	}
	return e, nil
}

// workloadOf is dbrig's name for a HammerDB benchmark: HammerDB keeps
// TPROC-C as TPC-C in its jobs database, and dbrig's tproc-c is the same
// workload, so their figures chart together.
func workloadOf(bm string) string {
	switch strings.ToUpper(bm) {
	case "TPC-C", "TPROC-C":
		return "tproc-c"
	case "TPC-H", "TPROC-H":
		return "tproc-h"
	}
	return strings.ToLower(bm)
}

// jobStart is when the job started. A HammerDB jobid starts with the
// Unix time it was made in hex, which is UTC; its timestamp column is
// the local time of a zone it does not name, read as UTC where the jobid
// says nothing that agrees with it.
func jobStart(j hdbJob) time.Time {
	var id time.Time
	if len(j.ID) >= 8 {
		if sec, err := strconv.ParseUint(j.ID[:8], 16, 64); err == nil {
			if t := time.Unix(int64(sec), 0).UTC(); t.Year() >= 2000 && t.Year() < 2100 {
				id = t
			}
		}
	}
	local, err := time.Parse("2006-01-02 15:04:05", j.Timestamp)
	switch {
	case err != nil:
		return id
	// No zone is more than 14 hours from UTC.
	case !id.IsZero() && id.Sub(local).Abs() <= 14*time.Hour+time.Minute:
		return id
	}
	return local
}
