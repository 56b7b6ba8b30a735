// Package docs holds askslack's documentation pages. Its tests keep them
// honest: every environment variable the code reads is on the configuration
// page, every relative link in the README and the pages leads somewhere,
// the README stays short, and nothing points outside the repository.
package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the module root, seen from this package's folder.
const root = ".."

// configPage lists every environment variable (TestConfigurationListsEveryVariable).
const configPage = "configuration.md"

// maxReadmeLines bounds the README: the rest lives in docs/.
const maxReadmeLines = 350

// skipDirs are not walked for the code's variables: not the repository's
// own source. outsideDirs are not walked for pointers outside the repository.
var (
	skipDirs    = map[string]bool{".git": true, "tmpprobe": true, "testdata": true, "node_modules": true, "vendor": true}
	outsideDirs = map[string]bool{".git": true, "tmpprobe": true, "node_modules": true}
)

// envName is what a literal must look like to count as one of askslack's
// variables when it is read indirectly (a constant, a helper, a field).
var envName = regexp.MustCompile(`^(ASKSLACK_[A-Z0-9_]+|REDIS_URL)$`)

// walk calls fn for every file under root with one of exts, skipping the
// folders named in skip; rel is slash-separated and relative to root.
func walk(t *testing.T, skip map[string]bool, exts []string, fn func(rel, path string)) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skip[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !slices.Contains(exts, filepath.Ext(path)) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		fn(filepath.ToSlash(rel), path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// envRead is a variable the code reads and where.
type envRead struct {
	name, where string
}

// goPackage is the non-test files of one folder, parsed.
type goPackage struct {
	fset  *token.FileSet
	files map[string]*ast.File // by path relative to root
}

// goPackages parses every non-test .go file of the repository, by folder.
func goPackages(t *testing.T) map[string]*goPackage {
	t.Helper()
	pkgs := map[string]*goPackage{}
	walk(t, skipDirs, []string{".go"}, func(rel, path string) {
		if strings.HasSuffix(rel, "_test.go") {
			return
		}
		dir := filepath.Dir(rel)
		p := pkgs[dir]
		if p == nil {
			p = &goPackage{fset: token.NewFileSet(), files: map[string]*ast.File{}}
			pkgs[dir] = p
		}
		f, err := parser.ParseFile(p.fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("parsing %s: %v", rel, err)
			return
		}
		p.files[rel] = f
	})
	return pkgs
}

// stringConsts are a package's string constants with literal values.
func stringConsts(p *goPackage) map[string]string {
	consts := map[string]string{}
	for _, f := range p.files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if s, ok := stringLit(vs.Values[i]); ok {
							consts[n.Name] = s
						}
					}
				}
			}
		}
	}
	return consts
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// isCall reports whether call is pkg.name(…) for one of names.
func isCall(call *ast.CallExpr, pkg string, names ...string) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg && slices.Contains(names, sel.Sel.Name)
}

// envconfigKey is the variable envconfig reads for a struct field, as
// kelseyhightower/envconfig computes it: the envconfig tag, else the field
// name (split at word boundaries with split_words:"true"); then the
// prefix, if any, joined with "_"; upper-cased. With a prefix and a tag it
// also falls back to the tag alone. ok is false for fields it skips.
func envconfigKey(prefix, field string, tag reflect.StructTag) (keys []string, ok bool) {
	if !ast.IsExported(field) || tag.Get("ignored") == "true" {
		return nil, false
	}
	alt := tag.Get("envconfig")
	key := field
	if b, _ := strconv.ParseBool(tag.Get("split_words")); b {
		key = strings.Join(splitWords(field), "_")
	}
	if alt != "" {
		key = alt
	}
	if prefix != "" {
		key = prefix + "_" + key
	}
	keys = append(keys, strings.ToUpper(key))
	if prefix != "" && alt != "" {
		keys = append(keys, strings.ToUpper(alt))
	}
	return keys, true
}

// splitWords is envconfig's split_words: "APIURLValue" → API, URL, Value.
var wordRe = regexp.MustCompile("([^A-Z]+|[A-Z]+[^A-Z]+|[A-Z]+)")
var acronymRe = regexp.MustCompile("([A-Z]+)([A-Z][^A-Z]+)")

func splitWords(name string) []string {
	var out []string
	for _, w := range wordRe.FindAllStringSubmatch(name, -1) {
		if m := acronymRe.FindStringSubmatch(w[0]); len(m) == 3 {
			out = append(out, m[1], m[2])
		} else {
			out = append(out, w[0])
		}
	}
	return out
}

// processTargets maps, per package, the struct type names passed to
// envconfig.Process/MustProcess to the prefixes they are read with. A
// target whose type cannot be resolved is recorded under "" (every
// envconfig-tagged struct of the package then uses its prefix).
func processTargets(p *goPackage) map[string][]string {
	targets := map[string][]string{}
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			fd, ok := n.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				return true
			}
			// Variables declared in the function: var c T, c := T{}, c := &T{}, c := new(T).
			types := map[string]string{}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch s := n.(type) {
				case *ast.ValueSpec:
					if id, ok := s.Type.(*ast.Ident); ok {
						for _, name := range s.Names {
							types[name.Name] = id.Name
						}
					}
				case *ast.AssignStmt:
					for i, lhs := range s.Lhs {
						id, ok := lhs.(*ast.Ident)
						if ok && i < len(s.Rhs) {
							if tn := typeOf(s.Rhs[i]); tn != "" {
								types[id.Name] = tn
							}
						}
					}
				}
				return true
			})
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || !isCall(call, "envconfig", "Process", "MustProcess") || len(call.Args) != 2 {
					return true
				}
				prefix, ok := stringLit(call.Args[0])
				if !ok {
					prefix = "?" // not a literal: cannot say what the code reads
				}
				tn := typeOf(call.Args[1])
				if u, ok := call.Args[1].(*ast.UnaryExpr); ok && tn == "" {
					if id, ok := u.X.(*ast.Ident); ok {
						tn = types[id.Name]
					}
				}
				if id, ok := call.Args[1].(*ast.Ident); ok && tn == "" {
					tn = types[id.Name]
				}
				targets[tn] = append(targets[tn], prefix)
				return true
			})
			return false
		})
	}
	return targets
}

// typeOf names the struct type of T{}, &T{} or new(T); "" otherwise.
func typeOf(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.CompositeLit:
		if id, ok := x.Type.(*ast.Ident); ok {
			return id.Name
		}
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			return typeOf(x.X)
		}
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && id.Name == "new" && len(x.Args) == 1 {
			if t, ok := x.Args[0].(*ast.Ident); ok {
				return t.Name
			}
		}
	}
	return ""
}

// readVariables finds every environment variable askslack's code reads:
// the envconfig keys of the structs it processes, every os.Getenv /
// os.LookupEnv of a literal or a string constant, every call of a helper
// that passes its parameter on to them with a literal argument, and any
// other literal that is exactly an ASKSLACK_* name or REDIS_URL (a
// variable read through a field or a map).
func readVariables(t *testing.T) []envRead {
	t.Helper()
	var reads []envRead
	add := func(p *goPackage, pos token.Pos, name string) {
		reads = append(reads, envRead{name, p.fset.Position(pos).String()})
	}
	pkgs := goPackages(t)
	dirs := make([]string, 0, len(pkgs))
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		p := pkgs[dir]
		consts := stringConsts(p)
		targets := processTargets(p)
		envArg := func(e ast.Expr) (string, bool) {
			if s, ok := stringLit(e); ok {
				return s, true
			}
			if id, ok := e.(*ast.Ident); ok {
				s, ok := consts[id.Name]
				return s, ok
			}
			return "", false
		}
		// Helpers: func f(…, k string, …) that call os.Getenv(k) / os.LookupEnv(k).
		helpers := map[string]int{}
		for _, f := range p.files {
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || fd.Body == nil || fd.Recv != nil {
					continue
				}
				var params []string
				for _, fl := range fd.Type.Params.List {
					for _, n := range fl.Names {
						params = append(params, n.Name)
					}
				}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if ok && isCall(call, "os", "Getenv", "LookupEnv") && len(call.Args) == 1 {
						if id, ok := call.Args[0].(*ast.Ident); ok {
							if i := slices.Index(params, id.Name); i >= 0 {
								helpers[fd.Name.Name] = i
							}
						}
					}
					return true
				})
			}
		}
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.TypeSpec:
					st, ok := x.Type.(*ast.StructType)
					if !ok {
						return true
					}
					prefixes, processed := targets[x.Name.Name]
					prefixes = append(prefixes, targets[""]...)
					tagged := false
					for _, fl := range st.Fields.List {
						if fl.Tag != nil {
							tag, _ := strconv.Unquote(fl.Tag.Value)
							if _, ok := reflect.StructTag(tag).Lookup("envconfig"); ok {
								tagged = true
							}
						}
					}
					if !processed && !tagged {
						return true
					}
					if len(prefixes) == 0 {
						prefixes = []string{""} // tagged, read somewhere we cannot see: as tagged
					}
					for _, fl := range st.Fields.List {
						var tag reflect.StructTag
						if fl.Tag != nil {
							s, _ := strconv.Unquote(fl.Tag.Value)
							tag = reflect.StructTag(s)
						}
						if _, ok := tag.Lookup("envconfig"); !ok && !processed {
							continue
						}
						for _, n := range fl.Names {
							for _, prefix := range prefixes {
								if prefix == "?" {
									t.Errorf("%s: envconfig.Process with a prefix that is not a literal: say here what it reads", p.fset.Position(n.Pos()))
									continue
								}
								keys, ok := envconfigKey(prefix, n.Name, tag)
								if !ok {
									continue
								}
								for _, k := range keys {
									add(p, n.Pos(), k)
								}
							}
						}
					}
				case *ast.CallExpr:
					if isCall(x, "os", "Getenv", "LookupEnv") && len(x.Args) == 1 {
						if s, ok := envArg(x.Args[0]); ok && envName.MatchString(s) {
							add(p, x.Pos(), s)
						}
					}
					if id, ok := x.Fun.(*ast.Ident); ok {
						if i, ok := helpers[id.Name]; ok && i < len(x.Args) {
							if s, ok := envArg(x.Args[i]); ok && envName.MatchString(s) {
								add(p, x.Pos(), s)
							}
						}
					}
				case *ast.BasicLit:
					if s, ok := stringLit(x); ok && envName.MatchString(s) {
						add(p, x.Pos(), s)
					}
				}
				return true
			})
		}
	}
	return reads
}

// documentedVariables are the names in backticks in the first cell of the
// configuration page's table rows.
func documentedVariables(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(configPage)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	name := regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*)`")
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		for _, m := range name.FindAllStringSubmatch(first, -1) {
			rows[m[1]] = line
		}
	}
	return rows
}

func TestConfigurationListsEveryVariable(t *testing.T) {
	reads := readVariables(t)
	rows := documentedVariables(t)
	seen := map[string]bool{}
	for _, r := range reads {
		if seen[r.name] {
			continue
		}
		seen[r.name] = true
		if _, ok := rows[r.name]; !ok {
			t.Errorf("%s reads %s, which docs/%s does not list (add a row: | `%s` | default | meaning |)", r.where, r.name, configPage, r.name)
		}
	}
	// The variables every deployment sets must be among those found, or
	// the search above is broken.
	for _, v := range []string{"SLACK_BOT_TOKEN", "REDIS_URL", "ASKSLACK_CHANNEL", "ASKSLACK_URL", "ASKSLACK_AGENT", "ASKSLACK_HOOK_SILENCE"} {
		if !seen[v] {
			t.Errorf("the code search found no read of %s: readVariables misses something", v)
		}
	}
	if t.Failed() {
		return
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("%d variables read, all listed in docs/%s: %s", len(seen), configPage, strings.Join(names, " "))
}

// TestConfigurationDefaults checks that the row of every variable with an
// envconfig default says that default, in backticks.
func TestConfigurationDefaults(t *testing.T) {
	rows := documentedVariables(t)
	n := 0
	for _, p := range goPackages(t) {
		for _, f := range p.files {
			ast.Inspect(f, func(n0 ast.Node) bool {
				fl, ok := n0.(*ast.Field)
				if !ok || fl.Tag == nil {
					return true
				}
				s, _ := strconv.Unquote(fl.Tag.Value)
				tag := reflect.StructTag(s)
				name, def := tag.Get("envconfig"), tag.Get("default")
				if name == "" || def == "" {
					return true
				}
				n++
				if row, ok := rows[name]; ok && !strings.Contains(row, "`"+def+"`") {
					t.Errorf("%s: %s defaults to %q, but its row in docs/%s does not say `%s`", p.fset.Position(fl.Pos()), name, def, configPage, def)
				}
				return true
			})
		}
	}
	if n == 0 {
		t.Error("no envconfig default found: the search is broken")
	}
}

// mdFiles are the README and the docs pages, relative to root.
func mdFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, p := range pages {
		files = append(files, "docs/"+p)
	}
	return files
}

var (
	fence      = regexp.MustCompile("^ {0,3}(```|~~~)")
	mdLink     = regexp.MustCompile(`\]\(([^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+"[^"]*")?\)`)
	headingRe  = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	schemeLike = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// prose returns a Markdown file's lines outside fenced code blocks, with
// inline code spans blanked, and the headings among them.
func prose(b []byte) (lines []string, headings []string) {
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if fence.MatchString(l) {
			in = !in
			continue
		}
		if in {
			continue
		}
		if m := headingRe.FindStringSubmatch(l); m != nil {
			headings = append(headings, m[2])
		}
		lines = append(lines, blankCode(l))
	}
	return lines, headings
}

// blankCode blanks the inside of a line's code spans: a run of backticks
// up to the next run of as many.
func blankCode(l string) string {
	b := []byte(l)
	run := func(i int) int {
		j := i
		for j < len(b) && b[j] == '`' {
			j++
		}
		return j - i
	}
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := run(i)
		end := -1
		for j := i + n; j < len(b); {
			if b[j] != '`' {
				j++
				continue
			}
			m := run(j)
			if m == n {
				end = j
				break
			}
			j += m
		}
		if end < 0 {
			i += n // no closing run: literal backticks
			continue
		}
		for k := i + n; k < end; k++ {
			b[k] = ' '
		}
		i = end + n
	}
	return string(b)
}

// slug is GitHub's anchor for a heading: lower case, markup and
// punctuation other than - and _ dropped, spaces to -.
func slug(heading string) string {
	h := strings.ToLower(heading)
	// Links in a heading anchor on their text.
	h = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(h, "$1")
	var sb strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			sb.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// anchors are the anchors GitHub gives a file's headings (a repeated slug
// gets -1, -2, …).
func anchors(headings []string) map[string]bool {
	out := map[string]bool{}
	count := map[string]int{}
	for _, h := range headings {
		s := slug(h)
		if n := count[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		count[s]++
	}
	return out
}

func TestLinksResolve(t *testing.T) {
	headingsOf := map[string][]string{} // by path relative to root
	heads := func(rel string) ([]string, error) {
		if h, ok := headingsOf[rel]; ok {
			return h, nil
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		_, h := prose(b)
		headingsOf[rel] = h
		return h, nil
	}
	links := 0
	for _, file := range mdFiles(t) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		lines, _ := prose(b)
		for i, l := range lines {
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if target == "" || schemeLike.MatchString(target) || strings.HasPrefix(target, "//") {
					continue // external, mailto:, …
				}
				links++
				where := fmt.Sprintf("%s: link %q", file, target)
				pathPart, frag, _ := strings.Cut(target, "#")
				pathPart, err := url.PathUnescape(pathPart)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				rel := file
				if pathPart != "" {
					if strings.HasPrefix(pathPart, "/") {
						t.Errorf("%s (line %d): an absolute path; write it relative to %s", where, i+1, file)
						continue
					}
					rel = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), pathPart)))
					if rel == ".." || strings.HasPrefix(rel, "../") {
						t.Errorf("%s: points outside the repository", where)
						continue
					}
					if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
						t.Errorf("%s: %s does not exist", where, rel)
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(rel, ".md") {
					continue
				}
				h, err := heads(rel)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				if !anchors(h)[strings.ToLower(frag)] {
					t.Errorf("%s: %s has no heading with the anchor #%s", where, rel, frag)
				}
			}
		}
	}
	if links == 0 {
		t.Error("no relative link found: the link search is broken")
	}
}

func TestSlug(t *testing.T) {
	for h, want := range map[string]string{
		"Host API": "host-api",
		"Which prompts reach Slack: Claude Code's permission modes":                         "which-prompts-reach-slack-claude-codes-permission-modes",
		"Verified with the real CLIs: Claude Code 2.1.332 and Codex 0.171.0":                "verified-with-the-real-clis-claude-code-21332-and-codex-01710",
		"Measuring: `askslack bench`":                                                       "measuring-askslack-bench",
		"When nobody answers, and headless runs":                                            "when-nobody-answers-and-headless-runs",
		"Finding the questions that are yours: `/askslack`, App Home, answering by mention": "finding-the-questions-that-are-yours-askslack-app-home-answering-by-mention",
		"snake_case and -dashes-":                                                           "snake_case-and--dashes-",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}

func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > maxReadmeLines || (n == maxReadmeLines && !bytes.HasSuffix(b, []byte("\n"))) {
		t.Errorf("README.md has %d lines, at most %d: move the detail into a page under docs/ and link it", n, maxReadmeLines)
	}
}

// TestNothingPointsOutside fails on a pointer to a folder beside the
// repository, which readers of the repository do not have: cite the public
// page instead.
func TestNothingPointsOutside(t *testing.T) {
	bad := []byte(".." + "/shared/") // spelled so that this file does not hold it
	walk(t, outsideDirs, []string{".go", ".md"}, func(rel, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
			return
		}
		for i, l := range bytes.Split(b, []byte("\n")) {
			if bytes.Contains(l, bad) {
				t.Errorf("%s:%d points outside the repository (%s): cite the public page instead", rel, i+1, bad)
			}
		}
	})
}
