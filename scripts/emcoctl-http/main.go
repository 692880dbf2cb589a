// emcoctl-http: an HTTP client for EMCO's REST API that sends what upstream's
// emcoctl sends (../shared/spec/emcoctl-format.md), written for the flows'
// HTTP mode (scripts/flows.sh --http) so that CI needs no upstream source:
// the file is rendered with Go's text/template over the -v values and split
// with gopkg.in/yaml.v3 as emcoctl does, each document becomes a request to
// the service its anchor routes to (the --config file names a host and port
// per service), JSON or multipart/form-data with a "metadata" field and a
// "file" part (named "filename") or "files" parts, and the output is
// emcoctl's "---" / "URL:" / "Response Code:" / "Response:" blocks.
//
// usage: emcoctl-http --config CFG apply|update|delete|get -f FILE [-v VALUES] [-t TOKEN] [-s] [-w SECONDS]
//
// Built with Debian's golang-go and golang-gopkg-yaml.v3-dev, without
// modules: GO111MODULE=off GOPATH=/usr/share/gocode go build.
// Exit status: 0 when every request was answered 2xx (or, as emcoctl,
// without -s, whatever the answers), 1 on a transport error, an unreadable
// file or invalid YAML, 2 on a bad command line, 3 when -s stopped at an
// answer outside 2xx.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"gopkg.in/yaml.v3"
)

type document struct {
	Context struct {
		Anchor string `yaml:"anchor"`
	} `yaml:"resourceContext"`
	Metadata struct {
		Name        string `yaml:"name" json:"name"`
		Description string `yaml:"description,omitempty" json:"description,omitempty"`
		UserData1   string `yaml:"userData1,omitempty" json:"userData1,omitempty"`
		UserData2   string `yaml:"userData2,omitempty" json:"userData2,omitempty"`
	} `yaml:"metadata"`
	Spec         map[string]interface{} `yaml:"spec,omitempty"`
	File         string                 `yaml:"file,omitempty"`
	Files        []string               `yaml:"files,omitempty"`
	ClusterLabel string                 `yaml:"clusterLabel,omitempty"`
}

// The request body: metadata always, clusterLabel and spec when set.
type body struct {
	Metadata     interface{}            `json:"metadata"`
	ClusterLabel string                 `json:"clusterLabel,omitempty"`
	Spec         map[string]interface{} `json:"spec,omitempty"`
}

type endpoint struct {
	Host string `yaml:"host"`
	Port int    `yaml:"port"`
}

var services map[string]endpoint

// The service an anchor's requests go to (emcoctl-format.md §6).
func service(anchor string) (string, error) {
	s := strings.Split(anchor, "/")
	at := func(i int) string {
		if i < len(s) {
			return s[i]
		}
		return ""
	}
	switch s[0] {
	case "cluster-providers":
		switch {
		case at(4) == "networks" || at(4) == "provider-networks" || at(4) == "apply" || at(4) == "terminate" ||
			at(4) == "stop" || strings.HasPrefix(at(4), "status"):
			return "ncm", nil
		case at(2) == "ca-certs":
			return "cacert", nil
		}
		return "clm", nil
	case "controllers":
		return "orchestrator", nil
	case "clm-controllers":
		return "clm", nil
	case "dtc-controllers":
		return "dtc", nil
	case "projects":
		switch at(2) {
		case "logical-clouds":
			return "dcm", nil
		case "ca-certs":
			return "cacert", nil
		case "policy":
			return "policy", nil
		}
		byIntent := map[string]string{"network-chains": "sfc", "sfc-clients": "sfcclient",
			"network-controller-intent": "ovnaction", "traffic-group-intents": "dtc", "generic-k8s-intents": "gac",
			"hpa-intents": "hpaplacement", "temporal-workflow-intents": "workflowmgr",
			"temporal-action-controller": "tac", "policy-intents": "policy"}
		if svc, ok := byIntent[at(7)]; ok {
			return svc, nil
		}
		return "orchestrator", nil
	}
	return "", fmt.Errorf("Invalid baseUrl: %s", anchor)
}

func url(anchor string) (string, error) {
	svc, err := service(anchor)
	if err != nil {
		return "", err
	}
	ep, ok := services[svc]
	if in, has := services["ingress"]; has {
		ep, ok = in, true
	}
	if !ok || ep.Port == 0 {
		return "", fmt.Errorf("the config names no port for service %s", svc)
	}
	host := ep.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return fmt.Sprintf("http://%s:%d/v2/%s", host, ep.Port, anchor), nil
}

// R(A): the resource a collection document names.
func resourceAnchor(d document) string {
	a := d.Context.Anchor
	last := a[strings.LastIndex(a, "/")+1:]
	switch {
	case d.Metadata.Name != "":
		a += "/" + d.Metadata.Name
		if last == "composite-apps" {
			if v, ok := d.Spec["compositeAppVersion"].(string); ok {
				a += "/" + v
			}
		}
	case d.ClusterLabel != "":
		a += "/" + d.ClusterLabel
	}
	return a
}

func readDocuments(file, values string) ([]document, error) {
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if values != "" {
		raw, err := os.ReadFile(values)
		if err != nil {
			return nil, err
		}
		var v interface{}
		if err := yaml.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("%s: %v", values, err)
		}
		t, err := template.New(filepath.Base(file)).Parse(string(text))
		if err != nil {
			return nil, err
		}
		var out bytes.Buffer
		if err := t.Execute(&out, v); err != nil {
			return nil, err
		}
		text = out.Bytes()
	}
	var docs []document
	dec := yaml.NewDecoder(bytes.NewReader(text))
	for {
		var d document
		if err := dec.Decode(&d); err != nil {
			if errors.Is(err, io.EOF) {
				return docs, nil
			}
			return nil, fmt.Errorf("%s: invalid YAML: %v", file, err)
		}
		if d.Context.Anchor != "" {
			docs = append(docs, d)
		}
	}
}

type client struct {
	token string
	stop  bool
	wait  int // -w: seconds to sleep after a 202
	http  http.Client
}

var errStopped = errors.New("stopped at an API error")

func (c *client) send(method, anchor string, d *document) error {
	u, err := url(anchor)
	if err != nil {
		fmt.Println(err)
		return errStopped
	}
	var payload io.Reader
	contentType := ""
	if d != nil {
		b, err := json.Marshal(body{Metadata: d.Metadata, ClusterLabel: d.ClusterLabel, Spec: d.Spec})
		if err != nil {
			return err
		}
		if d.File == "" && len(d.Files) == 0 {
			payload, contentType = bytes.NewReader(b), "application/json"
		} else {
			var buf bytes.Buffer
			w := multipart.NewWriter(&buf)
			if err := w.WriteField("metadata", string(b)); err != nil {
				return err
			}
			attach := func(field, path, name string) error {
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				part, err := w.CreateFormFile(field, name)
				if err != nil {
					return err
				}
				_, err = part.Write(data)
				return err
			}
			if d.File != "" {
				err = attach("file", d.File, "filename")
			} else {
				for _, f := range d.Files {
					if err = attach("files", f, filepath.Base(strings.TrimSuffix(f, "/"))); err != nil {
						break
					}
				}
			}
			if err != nil {
				return err
			}
			w.Close()
			payload, contentType = &buf, w.FormDataContentType()
		}
	}
	req, err := http.NewRequest(method, u, payload)
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if method == "GET" {
		req.Header.Set("Accept", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	fmt.Printf("---\n%s  --> URL: %s\nResponse Code: %d\n", method, u, resp.StatusCode)
	if len(answer) > 0 {
		fmt.Printf("Response: %s\n", answer)
	}
	if resp.StatusCode == http.StatusAccepted {
		// emcoctl says so after every 202 and sleeps -w seconds
		fmt.Println("API Response code 202. Waiting...")
		time.Sleep(time.Duration(c.wait) * time.Second)
	}
	// Any other answer (409 for a POST of what exists, 404 for a DELETE of
	// what is gone) is printed and the next document goes, unless -s.
	if resp.StatusCode/100 != 2 && c.stop {
		return errStopped
	}
	return nil
}

func lastSegment(anchor string) string { return anchor[strings.LastIndex(anchor, "/")+1:] }

func run(c *client, verb string, docs []document) error {
	skip := map[string][]string{
		"update": {"instantiate", "apply", "approve", "terminate", "migrate", "update", "rollback"},
		"get":    {"instantiate", "apply", "approve", "terminate", "migrate", "update", "rollback", "stop"},
		"delete": {"approve", "status", "migrate", "update", "rollback"},
	}
	skipped := func(a string) bool {
		for _, s := range skip[verb] {
			if lastSegment(a) == s {
				return true
			}
		}
		return false
	}
	if verb == "delete" {
		for i, j := 0, len(docs)-1; i < j; i, j = i+1, j-1 {
			docs[i], docs[j] = docs[j], docs[i]
		}
	}
	for i := range docs {
		d := &docs[i]
		a := d.Context.Anchor
		if skipped(a) {
			continue
		}
		var err error
		switch verb {
		case "apply":
			err = c.send("POST", a, d)
		case "update":
			err = c.send("PUT", resourceAnchor(*d), d)
		case "get":
			err = c.send("GET", resourceAnchor(*d), nil)
		case "delete":
			if last := lastSegment(a); last == "instantiate" || last == "apply" {
				err = c.send("POST", a[:len(a)-len(last)]+"terminate", nil)
			} else {
				err = c.send("DELETE", resourceAnchor(*d), nil)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func main() {
	fs := flag.NewFlagSet("emcoctl-http", flag.ContinueOnError)
	config := fs.String("config", "", "YAML: service -> {host, port}")
	if err := fs.Parse(os.Args[1:]); err != nil || fs.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: emcoctl-http --config CFG apply|update|delete|get -f FILE [-v VALUES] [-t TOKEN] [-s] [-w SECONDS]")
		os.Exit(2)
	}
	verb := fs.Arg(0)
	sub := flag.NewFlagSet(verb, flag.ContinueOnError)
	file := sub.String("f", "", "input file")
	values := sub.String("v", "", "values for templating")
	token := sub.String("t", "", "bearer token")
	stop := sub.Bool("s", false, "stop at the first answer outside 2xx")
	wait := sub.Int("w", 0, "seconds to sleep after each 202 Accepted")
	if err := sub.Parse(fs.Args()[1:]); err != nil || *file == "" || *config == "" {
		fmt.Fprintln(os.Stderr, "emcoctl-http: --config and -f are required")
		os.Exit(2)
	}
	raw, err := os.ReadFile(*config)
	if err == nil {
		var named map[string]endpoint
		err = yaml.Unmarshal(raw, &named)
		services = map[string]endpoint{}
		for k, v := range named {
			services[strings.ToLower(k)] = v
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "emcoctl-http:", err)
		os.Exit(1)
	}
	docs, err := readDocuments(*file, *values)
	if err != nil {
		fmt.Fprintln(os.Stderr, "emcoctl-http:", err)
		os.Exit(1)
	}
	c := &client{token: *token, stop: *stop, wait: *wait}
	switch verb {
	case "apply", "update", "delete", "get":
	default:
		fmt.Fprintln(os.Stderr, "emcoctl-http: unknown command", verb)
		os.Exit(2)
	}
	if err := run(c, verb, docs); err != nil {
		if errors.Is(err, errStopped) {
			os.Exit(3)
		}
		fmt.Fprintln(os.Stderr, "emcoctl-http:", err)
		os.Exit(1)
	}
}
