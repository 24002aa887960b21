//go:build unix

package mariadb

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dbrig/dbrig/internal/exitcode"
	"github.com/dbrig/dbrig/internal/server"
)

// Version is a MariaDB server's release.
type Version struct {
	Major, Minor, Patch int
	Full                string // as mariadbd --version says, "10.11.19-MariaDB-0+deb12u1"
}

// Name is the version as a person names it.
func (v Version) Name() string { return "MariaDB " + v.Full }

var versionRE = regexp.MustCompile(`Ver (\d+)\.(\d+)\.(\d+)(\S*)`)

// readVersion asks mariadbd, which needs no data directory to say it.
func readVersion(ctx context.Context, binDir string) (Version, error) {
	out, err := server.BinOutput(ctx, binDir, "mariadbd", "--version")
	if err != nil {
		return Version{}, err
	}
	return parseVersion(string(out))
}

// versionName names the version of the binaries in binDir.
func versionName(ctx context.Context, binDir string) (string, error) {
	v, err := readVersion(ctx, binDir)
	return v.Name(), err
}

func parseVersion(s string) (Version, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("mariadbd --version said %q, which names no version", strings.TrimSpace(s))
	}
	v := Version{Full: m[1] + "." + m[2] + "." + m[3] + m[4]}
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	v.Patch, _ = strconv.Atoi(m[3])
	return v, nil
}

func (s *Server) binVersion(ctx context.Context) (Version, error) {
	bin, err := s.Bin()
	if err != nil {
		return Version{}, err
	}
	return readVersion(ctx, bin)
}

// DataFormat is the major.minor release: MariaDB upgrades a data
// directory across minor releases (mariadb-upgrade), so a sweep gives each
// its own, and patch releases share one.
func (s *Server) DataFormat(ctx context.Context) (string, error) {
	v, err := s.binVersion(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor), nil
}

// normalName is a setting's name as mariadbd lists it in its help, with
// '_' for '-': the server takes either.
func normalName(name string) string { return strings.ReplaceAll(strings.ToLower(name), "-", "_") }

var (
	namesMu sync.Mutex
	names   = map[string]map[string]string{} // by binary, once read
)

// settingDefaults maps every variable the binaries in binDir take to its
// default, from `mariadbd --verbose --help`, which starts no server; read
// once per binary.
func settingDefaults(ctx context.Context, binDir string) (map[string]string, error) {
	namesMu.Lock()
	defer namesMu.Unlock()
	if known, ok := names[binDir]; ok {
		return known, nil
	}
	out, err := server.BinOutput(ctx, binDir, "mariadbd", "--no-defaults", "--verbose", "--help")
	if err != nil {
		return nil, err
	}
	known := parseHelp(string(out))
	if len(known) == 0 {
		return nil, fmt.Errorf("mariadbd --verbose --help in %s listed no variables", binDir)
	}
	names[binDir] = known
	return known, nil
}

// parseHelp reads the table after "Variables (--variable-name=value)":
// a name, blanks, a value, up to the first blank line.
func parseHelp(help string) map[string]string {
	known := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(help))
	sc.Buffer(nil, 1<<20)
	table := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Variables (--variable-name=value)"):
			table = true
		case !table || strings.HasPrefix(line, "-----") || strings.HasPrefix(line, "and boolean options"):
		case strings.TrimSpace(line) == "":
			if len(known) > 0 {
				return known
			}
		default:
			if f := strings.Fields(line); len(f) > 0 {
				known[normalName(f[0])] = strings.Join(f[1:], " ")
			}
		}
	}
	return known
}

// knownNames lists the variables the binaries in binDir take.
func knownNames(ctx context.Context, binDir string) ([]string, error) {
	known, err := settingDefaults(ctx, binDir)
	return slices.Sorted(maps.Keys(known)), err
}

// ReadsDirect reports whether InnoDB opens its data files with O_DIRECT
// under settings (innodb_flush_method, else the binaries' default), so
// that the buffer pool is the only cache of the data.
func (s *Server) ReadsDirect(ctx context.Context, settings map[string]string) bool {
	method := ""
	for name, value := range settings {
		if normalName(name) == "innodb_flush_method" {
			method = value
		}
	}
	if method == "" {
		bin, err := s.Bin()
		if err != nil {
			return false
		}
		known, err := settingDefaults(ctx, bin)
		if err != nil {
			return false
		}
		method = known["innodb_flush_method"]
	}
	switch strings.ToUpper(method) {
	case "O_DIRECT", "O_DIRECT_NO_FSYNC", "ALL_O_DIRECT":
		return true
	}
	return false
}

// checkNames refuses a name mariadbd does not list (known), with the name
// meant when one is within a typo of it. The help lists every variable,
// so an unlisted name is refused whatever it looks like.
func checkNames(names, known []string) error {
	for _, name := range names {
		if slices.Contains(known, normalName(name)) {
			continue
		}
		if near := server.Closest(normalName(name), known); near != "" {
			return exitcode.Userf("unknown MariaDB setting %q (did you mean %s?)", name, near)
		}
		return exitcode.Userf("unknown MariaDB setting %q: mariadbd --verbose --help does not list it", name)
	}
	return nil
}

// Preflight checks, before anything is built or run, that mariadbd knows
// every setting the sweep asks for and that the host can give what they
// need.
func (s *Server) Preflight(ctx context.Context, points []map[string]string) error {
	if err := s.CheckSettingNames(ctx, server.PointNames(points)); err != nil {
		return err
	}
	return preflight(points, server.HugePages())
}

// preflight: large pages need huge pages reserved, or InnoDB falls back
// to normal pages with a warning, and the point measures something else
// than it says. hugePages is the host's reserved huge pages
// (server.HugePages, -1 when unknown).
func preflight(points []map[string]string, hugePages int) error {
	for _, p := range points {
		for name, value := range p {
			if normalName(name) == "large_pages" && isOn(value) && hugePages == 0 {
				return exitcode.Userf("this sweep cannot run here: large_pages=%s needs huge pages reserved, and /proc/meminfo shows HugePages_Total: 0 (as root: sysctl vm.nr_hugepages=N, with N x 2 MB above innodb_buffer_pool_size)", value)
			}
		}
	}
	return nil
}

func isOn(v string) bool {
	switch strings.ToLower(v) {
	case "1", "on", "true", "yes":
		return true
	}
	return false
}
