// Package deploy holds the deployment files (Slack app manifests, Dockerfile,
// docker-compose, Kubernetes, Prometheus, Grafana). Its tests keep them
// parseable and in step with the binary: environment variable names come
// from cmd/askslack/config.go, so a renamed variable fails here instead of in
// production.
package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// configFile declares the binary's environment (type Config, envconfig tags).
const configFile = "../cmd/askslack/internal/service/config.go"

// runtimeEnv are read by the Go runtime, not by askslack's Config.
var runtimeEnv = map[string]bool{"GOMEMLIMIT": true, "GOMAXPROCS": true, "GOGC": true, "GODEBUG": true}

// scopes are the bot scopes askslack needs; changing them means changing the
// Slack calls the bot makes (and the manifests' comments, and docs/operations.md).
var scopes = []string{"app_mentions:read", "channels:history", "chat:write", "commands", "groups:history", "im:history", "im:write", "mpim:history", "reactions:write", "team:read", "usergroups:read", "users:read", "users:read.email"}

// metricNames are the metrics the binary exposes (the contract alerts and the
// dashboard are written against). Histograms also have _bucket/_sum/_count.
var metricNames = map[string]bool{
	"askslack_asks_total":                      true,
	"askslack_ask_duration_seconds":            true,
	"askslack_time_to_answer_seconds":          true,
	"askslack_questions":                       true,
	"askslack_timed_waits_open":                true,
	"askslack_claims_total":                    true,
	"askslack_transitions_total":               true,
	"askslack_interactions_total":              true,
	"askslack_slack_api_calls_total":           true,
	"askslack_slack_api_call_duration_seconds": true,
	"askslack_slack_rate_limited_total":        true,
	"askslack_slack_queue_depth":               true,
	"askslack_slack_queue_oldest_seconds":      true,
	"askslack_claims_held":                     true,
	"askslack_claims_taken_over_total":         true,
	"askslack_steered_messages_total":          true,
	"askslack_store_errors_total":              true,
	"askslack_socket_connected":                true,
	"askslack_reminders_total":                 true,
	"askslack_reminder_sweeps_total":           true,
	"askslack_web_actions_total":               true,
	"askslack_pages_total":                     true,
	"askslack_webhook_deliveries_total":        true,
	"askslack_webhook_dead_letters_total":      true,
	"askslack_webhook_lag_seconds":             true,
	"askslack_installations":                   true,
	"askslack_installs_total":                  true,
	"askslack_install_token_refreshes_total":   true,
	"askslack_workspace_requests_total":        true,
}

// yamlDocs decodes every document of a YAML file.
func yamlDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	docs, err := decodeYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

func decodeYAML(path string) ([]map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []map[string]any
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, len(docs)+1, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s: no YAML document", path)
	}
	return docs, nil
}

// get walks a path of map keys and list indexes through decoded YAML/JSON.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any, path ...any) string {
	s, _ := get(v, path...).(string)
	return s
}

func list(v any, path ...any) []any {
	l, _ := get(v, path...).([]any)
	return l
}

func mapping(v any, path ...any) map[string]any {
	m, _ := get(v, path...).(map[string]any)
	return m
}

func TestEveryFileParses(t *testing.T) {
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml":
			n++
			if _, err := decodeYAML(path); err != nil {
				t.Error(err)
			}
		case ".json":
			n++
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Errorf("%s: %v", path, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Errorf("found only %d YAML/JSON files under deploy/", n)
	}
}

// configEnv returns the envconfig names of type Config's fields.
func configEnv(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), configFile, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Config" {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			t.Fatalf("%s: Config is not a struct", configFile)
		}
		found = true
		for _, field := range st.Fields.List {
			if field.Tag == nil {
				continue
			}
			tag, err := strconv.Unquote(field.Tag.Value)
			if err != nil {
				t.Fatalf("%s: tag %s: %v", configFile, field.Tag.Value, err)
			}
			if name, _, _ := strings.Cut(reflect.StructTag(tag).Get("envconfig"), ","); name != "" {
				names[name] = true
			}
		}
		return false
	})
	if !found {
		t.Fatalf("%s: no type Config", configFile)
	}
	for _, must := range []string{"SLACK_BOT_TOKEN", "REDIS_URL", "ASKSLACK_ADDR"} {
		if !names[must] {
			t.Fatalf("%s: Config has no envconfig:%q tag; found %v", configFile, must, names)
		}
	}
	return names
}

// k8sDocs returns every document under kubernetes/ except kustomization.yaml.
func k8sDocs(t *testing.T) map[string][]map[string]any {
	t.Helper()
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no kubernetes/*.yaml: %v", err)
	}
	out := map[string][]map[string]any{}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		out[f] = yamlDocs(t, f)
	}
	return out
}

func TestEnvNamesMatchConfig(t *testing.T) {
	known := configEnv(t)
	check := func(where, name string) {
		t.Helper()
		if !known[name] && !runtimeEnv[name] {
			t.Errorf("%s: %s is not an environment variable of the binary (envconfig tags of Config in %s)", where, name, configFile)
		}
	}

	configMaps := map[string]map[string]any{} // name → data
	secrets := map[string]map[string]any{}    // name → stringData+data
	var deployments []map[string]any
	for file, docs := range k8sDocs(t) {
		for _, doc := range docs {
			kind, name := str(doc, "kind"), str(doc, "metadata", "name")
			where := fmt.Sprintf("%s (%s %s)", file, kind, name)
			switch kind {
			case "ConfigMap":
				configMaps[name] = mapping(doc, "data")
				for k := range mapping(doc, "data") {
					check(where+" data", k)
				}
			case "Secret":
				keys := map[string]any{}
				for _, field := range []string{"stringData", "data"} {
					for k, v := range mapping(doc, field) {
						check(where+" "+field, k)
						keys[k] = v
					}
				}
				secrets[name] = keys
			case "Deployment", "StatefulSet", "DaemonSet", "Job":
				deployments = append(deployments, doc)
				for _, c := range append(list(doc, "spec", "template", "spec", "containers"), list(doc, "spec", "template", "spec", "initContainers")...) {
					if len(list(c, "envFrom")) > 0 {
						t.Errorf("%s container %s: envFrom hides variable names from this test; list env[] by name", where, str(c, "name"))
					}
					for _, e := range list(c, "env") {
						check(where+" env", str(e, "name"))
					}
				}
			}
		}
	}
	if len(deployments) == 0 || len(configMaps) == 0 || len(secrets) == 0 {
		t.Fatalf("want a Deployment, a ConfigMap and a Secret under kubernetes/, found %d, %d, %d", len(deployments), len(configMaps), len(secrets))
	}

	// Every reference names its own variable and resolves to a key the
	// ConfigMap / Secret template has; every key is used.
	used := map[string]bool{}
	for _, d := range deployments {
		for _, c := range list(d, "spec", "template", "spec", "containers") {
			for _, e := range list(c, "env") {
				name := str(e, "name")
				for _, ref := range []struct {
					field string
					objs  map[string]map[string]any
				}{{"configMapKeyRef", configMaps}, {"secretKeyRef", secrets}} {
					r := mapping(e, "valueFrom", ref.field)
					if r == nil {
						continue
					}
					key, obj := str(r, "key"), str(r, "name")
					if key != name {
						t.Errorf("env %s reads %s key %q: use the variable's own name as the key", name, ref.field, key)
					}
					keys, ok := ref.objs[obj]
					if !ok {
						t.Errorf("env %s: %s names %q, which no manifest under kubernetes/ defines", name, ref.field, obj)
						continue
					}
					if _, ok := keys[key]; !ok {
						t.Errorf("env %s: %s %q has no key %q", name, ref.field, obj, key)
					}
					used[ref.field+"/"+obj+"/"+key] = true
				}
			}
		}
	}
	for obj, keys := range configMaps {
		for k := range keys {
			if !used["configMapKeyRef/"+obj+"/"+k] {
				t.Errorf("ConfigMap %s key %s is not passed to any container", obj, k)
			}
		}
	}
	for obj, keys := range secrets {
		for k := range keys {
			if !used["secretKeyRef/"+obj+"/"+k] {
				t.Errorf("Secret %s key %s is not passed to any container", obj, k)
			}
		}
	}

	// docker-compose: the services built from this repository.
	compose := yamlDocs(t, "docker-compose.yaml")[0]
	bots := 0
	for svc, def := range mapping(compose, "services") {
		if get(def, "build") == nil {
			continue
		}
		bots++
		where := "docker-compose.yaml service " + svc + " environment"
		switch env := get(def, "environment").(type) {
		case map[string]any:
			for k := range env {
				check(where, k)
			}
		case []any:
			for _, kv := range env {
				s, _ := kv.(string)
				k, _, _ := strings.Cut(s, "=")
				check(where, k)
			}
		case nil:
		default:
			t.Errorf("%s: unexpected %T", where, env)
		}
	}
	if bots == 0 {
		t.Error("docker-compose.yaml: no service builds the bot")
	}
}

func TestDeployment(t *testing.T) {
	var dep, pdb, cm map[string]any
	for _, docs := range k8sDocs(t) {
		for _, doc := range docs {
			switch str(doc, "kind") {
			case "Deployment":
				dep = doc
			case "PodDisruptionBudget":
				pdb = doc
			case "ConfigMap":
				cm = doc
			}
		}
	}
	if dep == nil || pdb == nil || cm == nil {
		t.Fatal("want a Deployment, a PodDisruptionBudget and a ConfigMap under kubernetes/")
	}
	replicas, _ := get(dep, "spec", "replicas").(int)
	if replicas < 2 {
		t.Errorf("Deployment replicas = %d, want at least 2", replicas)
	}
	if min, _ := get(pdb, "spec", "minAvailable").(int); min < 1 || min >= replicas {
		t.Errorf("PodDisruptionBudget minAvailable = %v, want between 1 and replicas-1 (%d)", get(pdb, "spec", "minAvailable"), replicas-1)
	}
	pod := get(dep, "spec", "template", "spec")
	if get(pod, "securityContext", "runAsNonRoot") != true {
		t.Error("pod securityContext.runAsNonRoot is not true")
	}
	// The pod must outlive the bot's own drain.
	tgps, _ := get(pod, "terminationGracePeriodSeconds").(int)
	if grace, err := time.ParseDuration(str(cm, "data", "ASKSLACK_SHUTDOWN_GRACE")); err == nil && time.Duration(tgps)*time.Second <= grace {
		t.Errorf("terminationGracePeriodSeconds %d does not exceed ASKSLACK_SHUTDOWN_GRACE %s", tgps, grace)
	}
	if tgps == 0 {
		t.Error("terminationGracePeriodSeconds is not set")
	}
	for _, c := range list(pod, "containers") {
		name := str(c, "name")
		sc := mapping(c, "securityContext")
		if sc["allowPrivilegeEscalation"] != false || sc["readOnlyRootFilesystem"] != true {
			t.Errorf("container %s: want allowPrivilegeEscalation false and readOnlyRootFilesystem true, got %v", name, sc)
		}
		if !slices.Contains(list(sc, "capabilities", "drop"), any("ALL")) {
			t.Errorf("container %s: capabilities.drop lacks ALL", name)
		}
		if p := str(c, "livenessProbe", "httpGet", "path"); p != "/healthz" {
			t.Errorf("container %s: liveness probe path %q, want /healthz", name, p)
		}
		if p := str(c, "readinessProbe", "httpGet", "path"); p != "/readyz" {
			t.Errorf("container %s: readiness probe path %q, want /readyz", name, p)
		}
		if str(c, "ports", 0, "name") != "http" || get(c, "ports", 0, "containerPort") != 8080 {
			t.Errorf("container %s: want port 8080 named http, got %v", name, get(c, "ports"))
		}
		if mapping(c, "resources", "requests") == nil || mapping(c, "resources", "limits") == nil {
			t.Errorf("container %s: set resources.requests and resources.limits", name)
		}
	}

	// kustomization.yaml lists files that exist, and never the secret template.
	k := yamlDocs(t, "kubernetes/kustomization.yaml")[0]
	for _, r := range list(k, "resources") {
		s, _ := r.(string)
		if _, err := os.Stat(filepath.Join("kubernetes", s)); err != nil {
			t.Errorf("kustomization.yaml: %v", err)
		}
		if strings.Contains(s, "example") {
			t.Errorf("kustomization.yaml applies the template %s", s)
		}
	}
}

// scopesDoc is the page that says why the bot needs each scope: its
// "**Scopes**" item (docs/operations.md, "Run in production", which the
// README links to).
const scopesDoc = "../docs/operations.md"

// scopesWhy returns the "**Scopes**" item of scopesDoc: from its line to the
// next item or the end of the list.
func scopesWhy(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(scopesDoc)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "- **Scopes**") })
	if start < 0 {
		t.Fatalf("%s has no \"- **Scopes**\" item saying why the bot needs each scope", scopesDoc)
	}
	end := start + 1
	for end < len(lines) && strings.HasPrefix(lines[end], "  ") {
		end++
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, []byte("(docs/operations.md)")) {
		t.Errorf("the README does not link to docs/operations.md, where the scopes are explained")
	}
	return []byte(strings.Join(lines[start:end], "\n"))
}

func TestSlackManifests(t *testing.T) {
	why := scopesWhy(t)
	socket := yamlDocs(t, "slack-app-manifest.yaml")[0]
	httpm := yamlDocs(t, "slack-app-manifest.http.yaml")[0]
	for name, m := range map[string]map[string]any{"slack-app-manifest.yaml": socket, "slack-app-manifest.http.yaml": httpm} {
		var got []string
		for _, s := range list(m, "oauth_config", "scopes", "bot") {
			got = append(got, fmt.Sprint(s))
		}
		slices.Sort(got)
		if !slices.Equal(got, scopes) {
			t.Errorf("%s: bot scopes %v, want exactly %v", name, got, scopes)
		}
		for _, s := range got {
			if !bytes.Contains(why, []byte("`"+s+"`")) {
				t.Errorf("%s: %s (its **Scopes** item) never says why the bot needs `%s`", name, scopesDoc, s)
			}
		}
		// The answer page's Sign in with Slack: its redirect URL and the
		// OpenID Connect user scopes.
		// And Add to Slack's, with several workspaces.
		if urls := list(m, "oauth_config", "redirect_urls"); len(urls) != 2 || !strings.HasSuffix(fmt.Sprint(urls[0]), "/app/auth/callback") ||
			!strings.HasSuffix(fmt.Sprint(urls[1]), "/slack/oauth_redirect") {
			t.Errorf("%s: oauth_config.redirect_urls %v, want the answer page's https://…/app/auth/callback and Add to Slack's https://…/slack/oauth_redirect", name, urls)
		}
		var user []string
		for _, s := range list(m, "oauth_config", "scopes", "user") {
			user = append(user, fmt.Sprint(s))
		}
		if slices.Sort(user); !slices.Equal(user, []string{"email", "openid", "profile"}) {
			t.Errorf("%s: user scopes %v, want openid, profile and email (Sign in with Slack)", name, user)
		}
		if get(m, "settings", "interactivity", "is_enabled") != true {
			t.Errorf("%s: settings.interactivity.is_enabled is not true", name)
		}
		checkReach(t, name, m)
		if get(m, "display_information", "name") == nil || get(m, "features", "bot_user", "display_name") == nil {
			t.Errorf("%s: display_information.name and features.bot_user.display_name are required", name)
		}
		if n := len(str(m, "display_information", "name")); n > 35 {
			t.Errorf("%s: display_information.name is %d characters, Slack allows 35", name, n)
		}
	}
	if get(socket, "settings", "socket_mode_enabled") != true {
		t.Error("slack-app-manifest.yaml: socket_mode_enabled is not true")
	}
	if u := get(socket, "settings", "interactivity", "request_url"); u != nil {
		t.Errorf("slack-app-manifest.yaml: Socket Mode needs no request_url, has %v", u)
	}
	if get(httpm, "settings", "socket_mode_enabled") != false {
		t.Error("slack-app-manifest.http.yaml: socket_mode_enabled is not false")
	}
	if u := str(httpm, "settings", "interactivity", "request_url"); !strings.HasPrefix(u, "https://") || !strings.HasSuffix(u, "/slack/interactions") {
		t.Errorf("slack-app-manifest.http.yaml: interactivity.request_url %q, want https://…/slack/interactions", u)
	}
	if u := str(httpm, "settings", "event_subscriptions", "request_url"); !strings.HasPrefix(u, "https://") || !strings.HasSuffix(u, "/slack/events") {
		t.Errorf("slack-app-manifest.http.yaml: event_subscriptions.request_url %q, want https://…/slack/events", u)
	}
	if u := get(socket, "settings", "event_subscriptions", "request_url"); u != nil {
		t.Errorf("slack-app-manifest.yaml: Socket Mode needs no events request_url, has %v", u)
	}
	for name, m := range map[string]map[string]any{"slack-app-manifest.yaml": socket, "slack-app-manifest.http.yaml": httpm} {
		cmds := list(m, "features", "slash_commands")
		u, _ := cmds[0].(map[string]any)["url"].(string)
		if wantURL := name == "slack-app-manifest.http.yaml"; wantURL != (strings.HasPrefix(u, "https://") && strings.HasSuffix(u, "/slack/commands")) {
			t.Errorf("%s: /askslack url %q (HTTP mode needs https://…/slack/commands, Socket Mode none)", name, u)
		}
	}

	// Every scope says why it is there.
	for _, name := range []string{"slack-app-manifest.yaml", "slack-app-manifest.http.yaml"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var root yaml.Node
		if err := yaml.Unmarshal(b, &root); err != nil {
			t.Fatal(err)
		}
		bot := yamlNode(&root, "oauth_config", "scopes", "bot")
		if bot == nil || bot.Kind != yaml.SequenceNode {
			t.Fatalf("%s: no oauth_config.scopes.bot list", name)
		}
		for _, s := range bot.Content {
			if strings.TrimSpace(s.HeadComment+s.LineComment) == "" {
				t.Errorf("%s: scope %s has no comment saying why the bot needs it", name, s.Value)
			}
		}
	}
}

// checkReach checks what issue 14 needs of a manifest: the Home tab, the
// app_home_opened and app_mention events, and the /askslack command.
func checkReach(t *testing.T, name string, m map[string]any) {
	t.Helper()
	if get(m, "features", "app_home", "home_tab_enabled") != true {
		t.Errorf("%s: features.app_home.home_tab_enabled is not true", name)
	}
	var events []string
	for _, e := range list(m, "settings", "event_subscriptions", "bot_events") {
		events = append(events, fmt.Sprint(e))
	}
	slices.Sort(events)
	if !slices.Equal(events, []string{"app_home_opened", "app_mention", "app_uninstalled", "tokens_revoked"}) {
		t.Errorf("%s: bot_events %v, want app_home_opened, app_mention, app_uninstalled and tokens_revoked", name, events)
	}
	cmds := list(m, "features", "slash_commands")
	if len(cmds) != 1 {
		t.Fatalf("%s: %d slash commands, want /askslack", name, len(cmds))
	}
	if c, _ := cmds[0].(map[string]any); c["command"] != "/askslack" || c["description"] == nil {
		t.Errorf("%s: slash command %v, want /askslack with a description", name, c)
	}
}

// yamlNode finds a mapping path in a yaml.Node tree.
func yamlNode(n *yaml.Node, path ...string) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, key := range path {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []string{
		`ENTRYPOINT ["/askslack"]`,
		"EXPOSE 8080",
		"CGO_ENABLED=0",
		"go build -trimpath -ldflags=\"-s -w\"",
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %s", want)
		}
	}
	// The last stage runs as a non-root user.
	stages := strings.Split(df, "\nFROM ")
	last := stages[len(stages)-1]
	if m := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindStringSubmatch(last); m == nil || m[1] == "root" || strings.HasPrefix(m[1], "0") {
		t.Errorf("the final stage has no non-root USER (got %v)", m)
	}
	// The packages it builds exist (the build context is the repository root).
	for _, m := range regexp.MustCompile(`go build [^\n]*?(\./\S+)`).FindAllStringSubmatch(df, -1) {
		if _, err := os.Stat(filepath.Join("..", m[1])); err != nil {
			t.Errorf("Dockerfile builds %s: %v", m[1], err)
		}
	}
	// docker-compose's healthcheck runs a binary the image has.
	compose := yamlDocs(t, "docker-compose.yaml")[0]
	for svc, def := range mapping(compose, "services") {
		if get(def, "build") == nil {
			continue
		}
		if str(def, "build", "dockerfile") != "deploy/Dockerfile" || str(def, "build", "context") != ".." {
			t.Errorf("docker-compose service %s: build it from the repository root with deploy/Dockerfile", svc)
		}
		test := list(def, "healthcheck", "test")
		if len(test) < 2 || test[0] != "CMD" {
			t.Errorf("docker-compose service %s: healthcheck.test %v, want [CMD, /healthcheck, …] (the image has no shell)", svc, test)
			continue
		}
		if bin := fmt.Sprint(test[1]); !strings.Contains(df, "COPY --from=build /out"+bin+" "+bin) {
			t.Errorf("docker-compose service %s: healthcheck runs %s, which the Dockerfile does not copy into the image", svc, bin)
		}
		if !strings.Contains(fmt.Sprint(test), "/healthz") {
			t.Errorf("docker-compose service %s: healthcheck does not probe /healthz", svc)
		}
		if !strings.Contains(fmt.Sprint(get(def, "environment")), "redis://redis:6379") {
			t.Errorf("docker-compose service %s: REDIS_URL does not point at the redis service", svc)
		}
	}
}

// rules returns alerts.yaml's rules.
func rules(t *testing.T) (doc map[string]any, rs []map[string]any) {
	doc = yamlDocs(t, "prometheus/alerts.yaml")[0]
	for _, g := range list(doc, "groups") {
		for _, r := range list(g, "rules") {
			rs = append(rs, r.(map[string]any))
		}
	}
	if len(rs) == 0 {
		t.Fatal("prometheus/alerts.yaml has no rules")
	}
	return doc, rs
}

var metricRE = regexp.MustCompile(`\baskslack_[a-z0-9_]+`)

// checkMetrics fails on askslack_* names outside the contract (typos).
func checkMetrics(t *testing.T, where, expr string) {
	t.Helper()
	for _, m := range metricRE.FindAllString(expr, -1) {
		base := m
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(m, suf); ok && metricNames[b] && strings.HasSuffix(b, "_seconds") {
				base = b
			}
		}
		if !metricNames[base] {
			t.Errorf("%s: unknown metric %s", where, m)
		}
	}
}

func TestAlerts(t *testing.T) {
	_, rs := rules(t)
	want := []string{"AskslackDown", "AskslackQuestionsStuck", "AskslackSlackAPIErrors", "AskslackSlackRateLimited",
		"AskslackSlackQueueBacklog", "AskslackNoClaimHolder", "AskslackSocketModeDown", "AskslackStoreErrors"}
	var have []string
	for _, r := range rs {
		name := str(r, "alert")
		have = append(have, name)
		checkMetrics(t, "alert "+name, str(r, "expr"))
		for _, a := range []string{"summary", "description", "runbook"} {
			if str(r, "annotations", a) == "" {
				t.Errorf("alert %s: no %s annotation", name, a)
			}
		}
		if s := str(r, "labels", "severity"); s != "critical" && s != "warning" {
			t.Errorf("alert %s: severity %q, want critical or warning", name, s)
		}
		// Store-wide gauges are identical on every replica: never sum them.
		if regexp.MustCompile(`sum[^(]*\(\s*askslack_(questions|timed_waits_open)\b`).MatchString(str(r, "expr")) {
			t.Errorf("alert %s sums askslack_questions, which every replica reports in full; use max", name)
		}
	}
	for _, w := range want {
		if !slices.Contains(have, w) {
			t.Errorf("alerts.yaml has no %s alert", w)
		}
	}
}

func TestDashboard(t *testing.T) {
	var d struct {
		SchemaVersion int `json:"schemaVersion"`
		Templating    struct {
			List []struct {
				Name, Type string
				Query      any
			}
		}
		Panels []map[string]any
	}
	b, err := os.ReadFile("grafana/askslack.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d, want 36 or later", d.SchemaVersion)
	}
	hasDS := false
	for _, v := range d.Templating.List {
		if v.Type == "datasource" && v.Query == "prometheus" && v.Name == "datasource" {
			hasDS = true
		}
	}
	if !hasDS {
		t.Error("no Prometheus datasource variable named datasource")
	}
	ids := map[float64]bool{}
	seen := map[string]bool{}
	for _, p := range d.Panels {
		title := str(p, "title")
		id, _ := p["id"].(float64)
		if ids[id] {
			t.Errorf("panel %q: duplicate id %v", title, id)
		}
		ids[id] = true
		if str(p, "type") == "row" {
			continue
		}
		if uid := str(p, "datasource", "uid"); uid != "${datasource}" {
			t.Errorf("panel %q: datasource uid %q, want ${datasource}", title, uid)
		}
		targets := list(p, "targets")
		if len(targets) == 0 {
			t.Errorf("panel %q has no queries", title)
		}
		for _, tg := range targets {
			expr := str(tg, "expr")
			checkMetrics(t, "panel "+title, expr)
			for _, m := range metricRE.FindAllString(expr, -1) {
				seen[strings.TrimSuffix(m, "_bucket")] = true
			}
		}
	}
	for m := range metricNames {
		if !seen[m] {
			t.Errorf("the dashboard shows no panel for %s", m)
		}
	}
}

// dashboardExprs returns the dashboard's queries with Grafana's variables
// replaced, so promtool can parse them.
func dashboardExprs(t *testing.T) []string {
	var d struct{ Panels []map[string]any }
	b, err := os.ReadFile("grafana/askslack.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	r := strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$job", ".*", "$instance", ".*")
	var out []string
	for _, p := range d.Panels {
		for _, tg := range list(p, "targets") {
			if e := str(tg, "expr"); e != "" {
				out = append(out, r.Replace(e))
			}
		}
	}
	return out
}

func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian: apt-get install prometheus)")
	}
	return p
}

func runPromtool(t *testing.T, bin string, args ...string) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestPromtoolCheckRules(t *testing.T) {
	runPromtool(t, promtool(t), "check", "rules", "prometheus/alerts.yaml")
}

// TestPromtoolTestRules runs prometheus/alerts_test.yaml against alerts.yaml
// without annotations (promtool compares them, the test file only checks
// which alerts fire with which labels).
func TestPromtoolTestRules(t *testing.T) {
	bin := promtool(t)
	doc, rs := rules(t)
	for _, r := range rs {
		delete(r, "annotations")
	}
	dir := t.TempDir()
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile("prometheus/alerts_test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts_test.yaml"), tests, 0o644); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, bin, "test", "rules", filepath.Join(dir, "alerts_test.yaml"))
}

// TestPromtoolDashboardQueries checks that the dashboard's PromQL parses, by
// handing it to promtool as recording rules.
func TestPromtoolDashboardQueries(t *testing.T) {
	bin := promtool(t)
	var rs []map[string]any
	for i, e := range dashboardExprs(t) {
		rs = append(rs, map[string]any{"record": fmt.Sprintf("dashboard:query%d", i), "expr": e})
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rs}}})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	runPromtool(t, bin, "check", "rules", f)
}
