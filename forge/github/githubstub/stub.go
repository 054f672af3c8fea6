// Package githubstub is a stub of GitHub's REST API for tests: an HTTP
// server on 127.0.0.1 holding one repository in memory, answering the
// endpoints forge/github uses with the response shapes of GitHub's REST
// documentation (issues, issue comments, labels, collaborator permission,
// pulls, combined status, check runs, reviews, review comments), with
// GitHub's rate-limit headers on every answer, ETags and 304s on GETs, and
// GitHub's error bodies. GitHub itself cannot be reached from the tests.
// Tests seed it through its methods (the way a person would act on
// github.com) and read what the client did back from it.
package githubstub

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Stub is one repository on a fake GitHub.
type Stub struct {
	// URL is the API root to configure the client with (ends in "/").
	URL string

	Owner, Name string
	// Token, when set, is the only token the stub accepts.
	Token string
	// ResolveRef names the commit a branch is at, for pull requests; the
	// default reads the branches Push seeded. A test with a real bare
	// remote points it at the remote.
	ResolveRef func(ref string) (sha string, ok bool)

	srv *httptest.Server

	mu       sync.Mutex
	now      func() time.Time
	nextID   int64
	nextNum  int
	issues   map[int]*issue
	comments []*comment
	labels   map[string]*label
	perms    map[string]string
	branches map[string]string
	pulls    map[int]*pull
	statuses map[string][]status
	runs     map[string][]checkRun
	reviews  map[int][]review
	rcomms   map[int][]*comment
	limit    *limitAnswer
	requests int
	notMod   int
}

type issue struct {
	Number   int
	Title    string
	Body     string
	Author   string
	Labels   []string
	Open     bool
	Created  time.Time
	Updated  time.Time
	Comments int
	IsPull   bool
}

type comment struct {
	ID      int64
	Number  int
	Author  string
	Body    string
	Created time.Time
	Updated time.Time
	Path    string
	Line    int
}

type label struct {
	ID    int64
	Name  string
	Color string
}

type pull struct {
	Number int
	Head   string
	SHA    string
	Base   string
	Merged time.Time
}

type status struct {
	State, Context string
}

type checkRun struct {
	ID                 int64
	Name               string
	Status, Conclusion string
}

type review struct {
	ID       int64
	Author   string
	State    string
	CommitID string
	At       time.Time
}

type limitAnswer struct {
	secondary bool
	reset     time.Time
}

// New starts a stub of repository owner/name on 127.0.0.1; it stops when
// the test ends.
func New(t testing.TB, owner, name string) *Stub {
	t.Helper()
	s := &Stub{Owner: owner, Name: name, now: time.Now, nextID: 1000, nextNum: 1,
		issues: map[int]*issue{}, labels: map[string]*label{}, perms: map[string]string{owner: "admin"},
		branches: map[string]string{}, pulls: map[int]*pull{}, statuses: map[string][]status{},
		runs: map[string][]checkRun{}, reviews: map[int][]review{}, rcomms: map[int][]*comment{}}
	s.ResolveRef = func(ref string) (string, bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		sha, ok := s.branches[ref]
		return sha, ok
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("githubstub: listen: %v", err)
	}
	s.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: s.routes()}}
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL + "/"
	return s
}

// Requests counts the API requests answered, and NotModified the 304s
// among them.
func (s *Stub) Requests() (all, notModified int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.notMod
}

// SetClock makes now the stub's clock (time.Now by default): what stamps
// the issues, comments and reviews, to the second as GitHub does.
func (s *Stub) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// ---- seeding, as a person on github.com would ----

// SetPermission gives user a permission on the repository: "admin",
// "maintain", "write", "triage", "read" or "none".
func (s *Stub) SetPermission(user, perm string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perms[user] = perm
}

// AddIssue opens an issue by author with labels and returns its number.
func (s *Stub) AddIssue(author, title, body string, labels ...string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range labels {
		s.labelLocked(l, "ededed")
	}
	now := s.tick()
	n := s.nextNum
	s.nextNum++
	s.issues[n] = &issue{Number: n, Title: title, Body: body, Author: author, Labels: labels, Open: true, Created: now, Updated: now}
	return n
}

// CloseIssue closes an issue.
func (s *Stub) CloseIssue(number int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.issues[number]; i != nil {
		i.Open, i.Updated = false, s.tick()
	}
}

// AddComment posts a comment by author on an issue or pull request.
func (s *Stub) AddComment(number int, author, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commentLocked(number, author, body).ID
}

// DeleteComment deletes a comment, as a person can on GitHub; it reports
// whether there was one.
func (s *Stub) DeleteComment(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.comments)
	s.comments = slices.DeleteFunc(s.comments, func(c *comment) bool { return c.ID == id })
	return len(s.comments) < n
}

// Push sets branch ref at sha, as a push would.
func (s *Stub) Push(ref, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.branches[ref] = sha
	for _, p := range s.pulls {
		if p.Head == ref && s.issues[p.Number].Open {
			p.SHA = sha
		}
	}
}

// SetStatus adds a commit status on the head of pull request number
// ("pending", "success", "failure", "error").
func (s *Stub) SetStatus(number int, context, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sha := s.headLocked(number)
	ss := slices.DeleteFunc(s.statuses[sha], func(x status) bool { return x.Context == context })
	s.statuses[sha] = append(ss, status{State: state, Context: context})
}

// SetCheckRun adds or replaces a check run on the head of pull request
// number: status "queued", "in_progress" or "completed", with a
// conclusion when completed ("success", "failure", …).
func (s *Stub) SetCheckRun(number int, name, st, conclusion string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sha := s.headLocked(number)
	rs := slices.DeleteFunc(s.runs[sha], func(x checkRun) bool { return x.Name == name })
	s.runs[sha] = append(rs, checkRun{ID: s.id(), Name: name, Status: st, Conclusion: conclusion})
}

// AddReview submits a review by author on the head of pull request number:
// "APPROVED", "CHANGES_REQUESTED" or "COMMENTED".
func (s *Stub) AddReview(number int, author, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reviews[number] = append(s.reviews[number], review{ID: s.id(), Author: author, State: state, CommitID: s.headLocked(number), At: s.tick()})
}

// AddReviewComment comments on line of path in pull request number's diff.
func (s *Stub) AddReviewComment(number int, author, path string, line int, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.tick()
	c := &comment{ID: s.id(), Number: number, Author: author, Body: body, Created: now, Updated: now, Path: path, Line: line}
	s.rcomms[number] = append(s.rcomms[number], c)
	return c.ID
}

// Merge merges pull request number, as its merge button does.
func (s *Stub) Merge(number int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pulls[number]; p != nil {
		now := s.tick()
		p.Merged = now
		s.issues[number].Open, s.issues[number].Updated = false, now
	}
}

// Pulls lists the numbers of the pull requests opened.
func (s *Stub) Pulls() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for n := range s.pulls {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// PullBody is the title and body a pull request was opened with.
func (s *Stub) PullBody(number int) (title, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.issues[number]; i != nil {
		return i.Title, i.Body
	}
	return "", ""
}

// Comment returns the body of an issue comment, or "" when there is none.
func (s *Stub) Comment(id int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.comments {
		if c.ID == id {
			return c.Body
		}
	}
	return ""
}

// Labels lists an issue's labels.
func (s *Stub) Labels(number int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.issues[number]; i != nil {
		return slices.Clone(i.Labels)
	}
	return nil
}

// RateLimitNext answers the next request as GitHub does when the limit is
// spent: the primary limit (403, X-RateLimit-Remaining: 0, reset at
// reset), or with secondary the secondary one (429 with Retry-After).
func (s *Stub) RateLimitNext(secondary bool, reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = &limitAnswer{secondary: secondary, reset: reset}
}

// ---- internals; callers hold mu ----

func (s *Stub) id() int64 { s.nextID++; return s.nextID }

// tick is the stub's clock at GitHub's one-second resolution.
func (s *Stub) tick() time.Time { return s.now().UTC().Truncate(time.Second) }

func (s *Stub) labelLocked(name, color string) *label {
	if l := s.labels[strings.ToLower(name)]; l != nil {
		return l
	}
	l := &label{ID: s.id(), Name: name, Color: color}
	s.labels[strings.ToLower(name)] = l
	return l
}

func (s *Stub) commentLocked(number int, author, body string) *comment {
	now := s.tick()
	c := &comment{ID: s.id(), Number: number, Author: author, Body: body, Created: now, Updated: now}
	s.comments = append(s.comments, c)
	if i := s.issues[number]; i != nil {
		i.Comments++
		i.Updated = now
	}
	return c
}

func (s *Stub) headLocked(number int) string {
	if p := s.pulls[number]; p != nil {
		return p.SHA
	}
	return ""
}

// fakeSHA is a commit id for a branch the stub knows only by name.
func fakeSHA(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

func (s *Stub) routes() http.Handler {
	m := http.NewServeMux()
	repo := "/repos/{owner}/{repo}"
	m.HandleFunc("GET /user", func(w http.ResponseWriter, r *http.Request) { s.ok(w, r, s.userJSON(s.Owner)) })
	m.HandleFunc("GET "+repo+"/issues", s.listIssues)
	m.HandleFunc("GET "+repo+"/issues/{n}", s.getIssue)
	m.HandleFunc("GET "+repo+"/issues/{n}/comments", s.listComments)
	m.HandleFunc("POST "+repo+"/issues/{n}/comments", s.createComment)
	m.HandleFunc("PATCH "+repo+"/issues/comments/{id}", s.editComment)
	m.HandleFunc("GET "+repo+"/collaborators/{user}/permission", s.permission)
	m.HandleFunc("GET "+repo+"/labels/{name}", s.getLabel)
	m.HandleFunc("POST "+repo+"/labels", s.createLabel)
	m.HandleFunc("POST "+repo+"/issues/{n}/labels", s.addLabels)
	m.HandleFunc("DELETE "+repo+"/issues/{n}/labels/{name}", s.removeLabel)
	m.HandleFunc("GET "+repo+"/pulls", s.listPulls)
	m.HandleFunc("POST "+repo+"/pulls", s.createPull)
	m.HandleFunc("GET "+repo+"/pulls/{n}", s.getPull)
	m.HandleFunc("GET "+repo+"/pulls/{n}/reviews", s.listReviews)
	m.HandleFunc("GET "+repo+"/pulls/{n}/comments", s.listReviewComments)
	m.HandleFunc("GET "+repo+"/commits/{ref}/status", s.combinedStatus)
	m.HandleFunc("GET "+repo+"/commits/{ref}/check-runs", s.checkRuns)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { s.fail(w, http.StatusNotFound, "Not Found") })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests++
		lim := s.limit
		s.limit = nil
		s.mu.Unlock()
		h := w.Header()
		h.Set("X-GitHub-Api-Version-Selected", "2022-11-28")
		h.Set("X-RateLimit-Limit", "5000")
		h.Set("X-RateLimit-Resource", "core")
		if lim != nil {
			h.Set("X-RateLimit-Remaining", "0")
			h.Set("X-RateLimit-Used", "5000")
			h.Set("X-RateLimit-Reset", strconv.FormatInt(lim.reset.Unix(), 10))
			if lim.secondary {
				h.Set("Retry-After", strconv.Itoa(max(int(time.Until(lim.reset).Seconds()+0.999), 0)))
				writeJSON(w, http.StatusTooManyRequests, map[string]string{"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
					"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"})
				return
			}
			writeJSON(w, http.StatusForbidden, map[string]string{"message": "API rate limit exceeded for user ID 1.",
				"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits"})
			return
		}
		h.Set("X-RateLimit-Remaining", "4999")
		h.Set("X-RateLimit-Used", "1")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
		if s.Token != "" {
			auth := r.Header.Get("Authorization")
			if auth != "Bearer "+s.Token && auth != "token "+s.Token {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
				return
			}
		}
		m.ServeHTTP(w, r)
	})
}

// ---- answers ----

func (s *Stub) repoOK(w http.ResponseWriter, r *http.Request) bool {
	if !strings.EqualFold(r.PathValue("owner"), s.Owner) || !strings.EqualFold(r.PathValue("repo"), s.Name) {
		s.fail(w, http.StatusNotFound, "Not Found")
		return false
	}
	return true
}

func (s *Stub) fail(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"message": msg, "documentation_url": "https://docs.github.com/rest", "status": strconv.Itoa(code)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// ok answers a GET with v, its ETag, and a 304 when the client has it.
func (s *Stub) ok(w http.ResponseWriter, r *http.Request, v any) {
	b, _ := json.Marshal(v)
	sum := sha1.Sum(b)
	etag := `W/"` + hex.EncodeToString(sum[:]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "private, max-age=60, s-maxage=60")
	if r.Header.Get("If-None-Match") == etag {
		s.mu.Lock()
		s.notMod++
		s.mu.Unlock()
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(b)
}

// page cuts a list to the page asked for and sets GitHub's Link header.
func page[T any](w http.ResponseWriter, r *http.Request, all []T) []T {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 || per > 100 {
		per = 30
	}
	p, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if p <= 0 {
		p = 1
	}
	from := min((p-1)*per, len(all))
	to := min(from+per, len(all))
	if to < len(all) {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(p+1))
		u := *r.URL
		u.RawQuery = q.Encode()
		u.Scheme, u.Host = "http", r.Host
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, u.String()))
	}
	return all[from:to]
}

func (s *Stub) number(w http.ResponseWriter, r *http.Request) (int, bool) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil {
		s.fail(w, http.StatusNotFound, "Not Found")
		return 0, false
	}
	return n, true
}

func since(r *http.Request) time.Time {
	t, _ := time.Parse(time.RFC3339, r.URL.Query().Get("since"))
	return t
}

func readBody(r *http.Request, v any) error {
	return json.NewDecoder(http.MaxBytesReader(nil, r.Body, 1<<20)).Decode(v)
}

// EditIssue sets an issue's title and body, as its author editing it
// would, and moves its updated time.
func (s *Stub) EditIssue(number int, title, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.issues[number]; i != nil {
		i.Title, i.Body, i.Updated = title, body, s.tick()
	}
}
