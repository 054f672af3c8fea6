package githubstub

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The JSON shapes below follow the examples of GitHub's REST reference
// (docs.github.com/rest, API version 2022-11-28), trimmed to the fields a
// client can rely on; null fields are written as null, as GitHub does.

func (s *Stub) userJSON(login string) map[string]any {
	return map[string]any{"login": login, "id": int64(len(login))*7919 + 1, "node_id": "U_" + login, "type": "User", "site_admin": false,
		"avatar_url": "https://avatars.githubusercontent.com/u/1?v=4", "url": s.URL + "users/" + login, "html_url": "https://github.com/" + login}
}

func (s *Stub) repoURL() string     { return s.URL + "repos/" + s.Owner + "/" + s.Name }
func (s *Stub) repoHTMLURL() string { return "https://github.com/" + s.Owner + "/" + s.Name }

func stamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func (s *Stub) labelJSON(l *label) map[string]any {
	return map[string]any{"id": l.ID, "node_id": fmt.Sprintf("LA_%d", l.ID), "url": s.repoURL() + "/labels/" + l.Name,
		"name": l.Name, "description": nil, "color": l.Color, "default": false}
}

func (s *Stub) issueJSON(i *issue) map[string]any {
	ls := []any{}
	for _, n := range i.Labels {
		ls = append(ls, s.labelJSON(s.labelLocked(n, "ededed")))
	}
	state, closed := "open", time.Time{}
	if !i.Open {
		state, closed = "closed", i.Updated
	}
	u := s.repoURL() + "/issues/" + strconv.Itoa(i.Number)
	out := map[string]any{"id": int64(i.Number) + 500000, "node_id": fmt.Sprintf("I_%d", i.Number), "url": u,
		"repository_url": s.repoURL(), "labels_url": u + "/labels{/name}", "comments_url": u + "/comments", "events_url": u + "/events",
		"html_url": s.repoHTMLURL() + "/issues/" + strconv.Itoa(i.Number), "number": i.Number, "state": state, "state_reason": nil,
		"title": i.Title, "body": i.Body, "user": s.userJSON(i.Author), "labels": ls, "assignee": nil, "assignees": []any{},
		"milestone": nil, "locked": false, "active_lock_reason": nil, "comments": i.Comments, "closed_at": stamp(closed),
		"created_at": stamp(i.Created), "updated_at": stamp(i.Updated), "closed_by": nil, "author_association": "COLLABORATOR"}
	if i.IsPull {
		pu := s.repoURL() + "/pulls/" + strconv.Itoa(i.Number)
		h := s.repoHTMLURL() + "/pull/" + strconv.Itoa(i.Number)
		out["html_url"] = h
		out["pull_request"] = map[string]any{"url": pu, "html_url": h, "diff_url": h + ".diff", "patch_url": h + ".patch", "merged_at": stamp(s.pulls[i.Number].Merged)}
	}
	return out
}

func (s *Stub) commentJSON(c *comment) map[string]any {
	return map[string]any{"id": c.ID, "node_id": fmt.Sprintf("IC_%d", c.ID), "url": s.repoURL() + "/issues/comments/" + strconv.FormatInt(c.ID, 10),
		"html_url":  fmt.Sprintf("%s/issues/%d#issuecomment-%d", s.repoHTMLURL(), c.Number, c.ID),
		"issue_url": s.repoURL() + "/issues/" + strconv.Itoa(c.Number), "body": c.Body, "user": s.userJSON(c.Author),
		"created_at": stamp(c.Created), "updated_at": stamp(c.Updated), "author_association": "COLLABORATOR"}
}

func (s *Stub) listIssues(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	q := r.URL.Query()
	want := q.Get("state")
	if want == "" {
		want = "open"
	}
	var labels []string
	if l := q.Get("labels"); l != "" {
		labels = strings.Split(l, ",")
	}
	from := since(r)
	s.mu.Lock()
	var is []*issue
	for _, i := range s.issues {
		if (want == "open" && !i.Open) || (want == "closed" && i.Open) || i.Updated.Before(from) {
			continue
		}
		if !slices.ContainsFunc(labels, func(l string) bool {
			return !slices.ContainsFunc(i.Labels, func(m string) bool { return strings.EqualFold(l, m) })
		}) {
			is = append(is, i)
		}
	}
	slices.SortFunc(is, func(a, b *issue) int {
		if q.Get("sort") == "updated" {
			if c := a.Updated.Compare(b.Updated); c != 0 {
				return c
			}
		}
		return a.Number - b.Number
	})
	if q.Get("direction") != "asc" {
		slices.Reverse(is)
	}
	out := []any{}
	for _, i := range page(w, r, is) {
		out = append(out, s.issueJSON(i))
	}
	s.mu.Unlock()
	s.ok(w, r, out)
}

func (s *Stub) getIssue(w http.ResponseWriter, r *http.Request) {
	n, ok := s.number(w, r)
	if !ok || !s.repoOK(w, r) {
		return
	}
	s.mu.Lock()
	i := s.issues[n]
	var v map[string]any
	if i != nil {
		v = s.issueJSON(i)
	}
	s.mu.Unlock()
	if i == nil {
		s.fail(w, http.StatusNotFound, "Not Found")
		return
	}
	s.ok(w, r, v)
}

func (s *Stub) listComments(w http.ResponseWriter, r *http.Request) {
	n, ok := s.number(w, r)
	if !ok || !s.repoOK(w, r) {
		return
	}
	from := since(r)
	s.mu.Lock()
	if s.issues[n] == nil {
		s.mu.Unlock()
		s.fail(w, http.StatusNotFound, "Not Found")
		return
	}
	var cs []*comment
	for _, c := range s.comments {
		if c.Number == n && !c.Updated.Before(from) {
			cs = append(cs, c)
		}
	}
	out := []any{}
	for _, c := range page(w, r, cs) {
		out = append(out, s.commentJSON(c))
	}
	s.mu.Unlock()
	s.ok(w, r, out)
}

func (s *Stub) createComment(w http.ResponseWriter, r *http.Request) {
	n, ok := s.number(w, r)
	if !ok || !s.repoOK(w, r) {
		return
	}
	var in struct {
		Body *string `json:"body"`
	}
	if err := readBody(r, &in); err != nil || in.Body == nil {
		s.invalid(w, "IssueComment", "body", "missing_field")
		return
	}
	s.mu.Lock()
	if s.issues[n] == nil {
		s.mu.Unlock()
		s.fail(w, http.StatusNotFound, "Not Found")
		return
	}
	v := s.commentJSON(s.commentLocked(n, s.Owner, *in.Body))
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, v)
}

func (s *Stub) editComment(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var in struct {
		Body *string `json:"body"`
	}
	if err := readBody(r, &in); err != nil || in.Body == nil {
		s.invalid(w, "IssueComment", "body", "missing_field")
		return
	}
	s.mu.Lock()
	i := slices.IndexFunc(s.comments, func(c *comment) bool { return c.ID == id })
	if i < 0 {
		s.mu.Unlock()
		s.fail(w, http.StatusNotFound, "Not Found")
		return
	}
	c := s.comments[i]
	c.Body, c.Updated = *in.Body, s.tick()
	v := s.commentJSON(c)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, v)
}

// invalid is GitHub's 422 "Validation Failed" body.
func (s *Stub) invalid(w http.ResponseWriter, resource, field, code string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
		"errors":            []any{map[string]string{"resource": resource, "field": field, "code": code}},
		"documentation_url": "https://docs.github.com/rest", "status": "422"})
}

func (s *Stub) permission(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	user := r.PathValue("user")
	s.mu.Lock()
	p, ok := s.perms[user]
	s.mu.Unlock()
	if !ok {
		// GitHub answers 404 for a login it does not know; a known user
		// without access has permission "none".
		if strings.HasPrefix(user, "ghost") {
			s.fail(w, http.StatusNotFound, "Not Found")
			return
		}
		p = "none"
	}
	legacy := p
	switch p {
	case "maintain":
		legacy = "write"
	case "triage":
		legacy = "read"
	}
	s.ok(w, r, map[string]any{"permission": legacy, "role_name": p, "user": s.userJSON(user)})
}

func (s *Stub) getLabel(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	s.mu.Lock()
	l := s.labels[strings.ToLower(r.PathValue("name"))]
	var v map[string]any
	if l != nil {
		v = s.labelJSON(l)
	}
	s.mu.Unlock()
	if l == nil {
		s.fail(w, http.StatusNotFound, "Not Found")
		return
	}
	s.ok(w, r, v)
}

func (s *Stub) createLabel(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	var in struct {
		Name  string `json:"name"`
		Color string `json:"color"`
	}
	if err := readBody(r, &in); err != nil || in.Name == "" {
		s.invalid(w, "Label", "name", "missing_field")
		return
	}
	s.mu.Lock()
	if s.labels[strings.ToLower(in.Name)] != nil {
		s.mu.Unlock()
		s.invalid(w, "Label", "name", "already_exists")
		return
	}
	v := s.labelJSON(s.labelLocked(in.Name, in.Color))
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, v)
}

func (s *Stub) addLabels(w http.ResponseWriter, r *http.Request) {
	n, ok := s.number(w, r)
	if !ok || !s.repoOK(w, r) {
		return
	}
	// GitHub takes {"labels": [...]} or a bare array.
	var raw any
	if err := readBody(r, &raw); err != nil {
		s.invalid(w, "Label", "labels", "invalid")
		return
	}
	var names []string
	list, _ := raw.([]any)
	if m, ok := raw.(map[string]any); ok {
		list, _ = m["labels"].([]any)
	}
	for _, x := range list {
		if n, ok := x.(string); ok {
			names = append(names, n)
		}
	}
	s.mu.Lock()
	i := s.issues[n]
	if i == nil {
		s.mu.Unlock()
		s.fail(w, http.StatusNotFound, "Not Found")
		return
	}
	for _, l := range names {
		s.labelLocked(l, "ededed")
		if !slices.ContainsFunc(i.Labels, func(m string) bool { return strings.EqualFold(l, m) }) {
			i.Labels = append(i.Labels, l)
		}
	}
	i.Updated = s.tick()
	out := []any{}
	for _, l := range i.Labels {
		out = append(out, s.labelJSON(s.labelLocked(l, "ededed")))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (s *Stub) removeLabel(w http.ResponseWriter, r *http.Request) {
	n, ok := s.number(w, r)
	if !ok || !s.repoOK(w, r) {
		return
	}
	name := r.PathValue("name")
	s.mu.Lock()
	i := s.issues[n]
	k := -1
	if i != nil {
		k = slices.IndexFunc(i.Labels, func(m string) bool { return strings.EqualFold(name, m) })
	}
	if k < 0 {
		s.mu.Unlock()
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Label does not exist", "documentation_url": "https://docs.github.com/rest"})
		return
	}
	i.Labels = slices.Delete(i.Labels, k, k+1)
	i.Updated = s.tick()
	out := []any{}
	for _, l := range i.Labels {
		out = append(out, s.labelJSON(s.labelLocked(l, "ededed")))
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}
