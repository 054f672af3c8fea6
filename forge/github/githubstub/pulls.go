package githubstub

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

func (s *Stub) branchJSON(ref, sha string) map[string]any {
	return map[string]any{"label": s.Owner + ":" + ref, "ref": ref, "sha": sha, "user": s.userJSON(s.Owner),
		"repo": map[string]any{"id": 1296269, "name": s.Name, "full_name": s.Owner + "/" + s.Name, "private": false,
			"owner": s.userJSON(s.Owner), "html_url": s.repoHTMLURL(), "url": s.repoURL(), "default_branch": "main"}}
}

func (s *Stub) pullJSON(p *pull) map[string]any {
	i := s.issues[p.Number]
	state := "open"
	if !i.Open {
		state = "closed"
	}
	n := strconv.Itoa(p.Number)
	h := s.repoHTMLURL() + "/pull/" + n
	u := s.repoURL() + "/pulls/" + n
	merged := !p.Merged.IsZero()
	var closed time.Time
	if !i.Open {
		closed = i.Updated
	}
	var mergedBy any
	if merged {
		mergedBy = s.userJSON(s.Owner)
	}
	return map[string]any{"url": u, "id": int64(p.Number) + 900000, "node_id": "PR_" + n, "html_url": h, "diff_url": h + ".diff",
		"patch_url": h + ".patch", "issue_url": s.repoURL() + "/issues/" + n, "commits_url": u + "/commits",
		"review_comments_url": u + "/comments", "comments_url": s.repoURL() + "/issues/" + n + "/comments",
		"statuses_url": s.repoURL() + "/statuses/" + p.SHA, "number": p.Number, "state": state, "locked": false,
		"title": i.Title, "user": s.userJSON(i.Author), "body": i.Body, "labels": []any{}, "milestone": nil,
		"active_lock_reason": nil, "created_at": stamp(i.Created), "updated_at": stamp(i.Updated),
		"closed_at": stamp(closed), "merged_at": stamp(p.Merged), "merge_commit_sha": nil,
		"assignee": nil, "assignees": []any{}, "requested_reviewers": []any{}, "requested_teams": []any{},
		"head": s.branchJSON(p.Head, p.SHA), "base": s.branchJSON(p.Base, fakeSHA(p.Base)),
		"author_association": "OWNER", "auto_merge": nil, "draft": false, "merged": merged, "mergeable": nil,
		"mergeable_state": "unknown", "merged_by": mergedBy, "comments": i.Comments, "review_comments": len(s.rcomms[p.Number]),
		"maintainer_can_modify": false, "commits": 1, "additions": 1, "deletions": 0, "changed_files": 1}
}

func (s *Stub) listPulls(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	q := r.URL.Query()
	want := q.Get("state")
	if want == "" {
		want = "open"
	}
	head := q.Get("head")
	if o, ref, ok := strings.Cut(head, ":"); ok {
		if !strings.EqualFold(o, s.Owner) {
			s.ok(w, r, []any{})
			return
		}
		head = ref
	}
	s.mu.Lock()
	var ps []*pull
	for _, p := range s.pulls {
		open := s.issues[p.Number].Open
		if (want == "open" && !open) || (want == "closed" && open) || (head != "" && p.Head != head) || (q.Get("base") != "" && p.Base != q.Get("base")) {
			continue
		}
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b *pull) int { return b.Number - a.Number })
	out := []any{}
	for _, p := range page(w, r, ps) {
		out = append(out, s.pullJSON(p))
	}
	s.mu.Unlock()
	s.ok(w, r, out)
}

func (s *Stub) createPull(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	var in struct {
		Title, Body, Head, Base string
	}
	if err := readBody(r, &in); err != nil {
		s.invalid(w, "PullRequest", "body", "invalid")
		return
	}
	if in.Title == "" {
		s.invalid(w, "PullRequest", "title", "missing_field")
		return
	}
	head := in.Head
	if o, ref, ok := strings.Cut(head, ":"); ok && strings.EqualFold(o, s.Owner) {
		head = ref
	}
	sha, ok := s.ResolveRef(head)
	if !ok {
		s.invalid(w, "PullRequest", "head", "invalid")
		return
	}
	if _, ok := s.ResolveRef(in.Base); !ok && in.Base != "main" {
		s.invalid(w, "PullRequest", "base", "invalid")
		return
	}
	s.mu.Lock()
	for _, p := range s.pulls {
		if p.Head == head && p.Base == in.Base && s.issues[p.Number].Open {
			s.mu.Unlock()
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
				"errors": []any{map[string]string{"resource": "PullRequest", "code": "custom",
					"message": fmt.Sprintf("A pull request already exists for %s:%s.", s.Owner, head)}},
				"documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request", "status": "422"})
			return
		}
	}
	now := s.tick()
	n := s.nextNum
	s.nextNum++
	s.issues[n] = &issue{Number: n, Title: in.Title, Body: in.Body, Author: s.Owner, Open: true, Created: now, Updated: now, IsPull: true}
	p := &pull{Number: n, Head: head, SHA: sha, Base: in.Base}
	s.pulls[n] = p
	v := s.pullJSON(p)
	s.mu.Unlock()
	w.Header().Set("Location", s.repoURL()+"/pulls/"+strconv.Itoa(n))
	writeJSON(w, http.StatusCreated, v)
}

func (s *Stub) getPull(w http.ResponseWriter, r *http.Request) {
	n, ok := s.number(w, r)
	if !ok || !s.repoOK(w, r) {
		return
	}
	s.mu.Lock()
	p := s.pulls[n]
	var v map[string]any
	if p != nil {
		v = s.pullJSON(p)
	}
	s.mu.Unlock()
	if p == nil {
		s.fail(w, http.StatusNotFound, "Not Found")
		return
	}
	s.ok(w, r, v)
}

func (s *Stub) listReviews(w http.ResponseWriter, r *http.Request) {
	n, ok := s.number(w, r)
	if !ok || !s.repoOK(w, r) {
		return
	}
	s.mu.Lock()
	if s.pulls[n] == nil {
		s.mu.Unlock()
		s.fail(w, http.StatusNotFound, "Not Found")
		return
	}
	out := []any{}
	for _, rv := range page(w, r, s.reviews[n]) {
		out = append(out, map[string]any{"id": rv.ID, "node_id": fmt.Sprintf("PRR_%d", rv.ID), "user": s.userJSON(rv.Author),
			"body": "", "state": rv.State, "html_url": fmt.Sprintf("%s/pull/%d#pullrequestreview-%d", s.repoHTMLURL(), n, rv.ID),
			"pull_request_url": s.repoURL() + "/pulls/" + strconv.Itoa(n), "submitted_at": stamp(rv.At), "commit_id": rv.CommitID,
			"author_association": "COLLABORATOR"})
	}
	s.mu.Unlock()
	s.ok(w, r, out)
}

func (s *Stub) listReviewComments(w http.ResponseWriter, r *http.Request) {
	n, ok := s.number(w, r)
	if !ok || !s.repoOK(w, r) {
		return
	}
	from := since(r)
	s.mu.Lock()
	p := s.pulls[n]
	if p == nil {
		s.mu.Unlock()
		s.fail(w, http.StatusNotFound, "Not Found")
		return
	}
	var cs []*comment
	for _, c := range s.rcomms[n] {
		if !c.Updated.Before(from) {
			cs = append(cs, c)
		}
	}
	out := []any{}
	for _, c := range page(w, r, cs) {
		out = append(out, map[string]any{"url": s.repoURL() + "/pulls/comments/" + strconv.FormatInt(c.ID, 10), "id": c.ID,
			"node_id": fmt.Sprintf("PRRC_%d", c.ID), "pull_request_review_id": nil, "diff_hunk": "@@ -1,1 +1,1 @@", "path": c.Path,
			"commit_id": p.SHA, "original_commit_id": p.SHA, "user": s.userJSON(c.Author), "body": c.Body,
			"created_at": stamp(c.Created), "updated_at": stamp(c.Updated),
			"html_url":         fmt.Sprintf("%s/pull/%d#discussion_r%d", s.repoHTMLURL(), n, c.ID),
			"pull_request_url": s.repoURL() + "/pulls/" + strconv.Itoa(n), "author_association": "COLLABORATOR",
			"line": c.Line, "original_line": c.Line, "side": "RIGHT", "start_line": nil, "original_start_line": nil,
			"start_side": nil, "subject_type": "line"})
	}
	s.mu.Unlock()
	s.ok(w, r, out)
}

func (s *Stub) combinedStatus(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	sha := s.refSHA(r.PathValue("ref"))
	s.mu.Lock()
	ss := s.statuses[sha]
	state := "pending" // GitHub's answer for a commit with no statuses
	if len(ss) > 0 {
		state = "success"
	}
	list := []any{}
	for k, st := range ss {
		switch {
		case st.State == "failure" || st.State == "error":
			state = "failure"
		case st.State == "pending" && state != "failure":
			state = "pending"
		}
		list = append(list, map[string]any{"id": k + 1, "node_id": fmt.Sprintf("SC_%d", k+1), "state": st.State,
			"description": st.Context + " " + st.State, "target_url": nil, "context": st.Context,
			"created_at": stamp(s.tick()), "updated_at": stamp(s.tick())})
	}
	s.mu.Unlock()
	s.ok(w, r, map[string]any{"state": state, "statuses": list, "sha": sha, "total_count": len(list),
		"repository": map[string]any{"id": 1296269, "name": s.Name, "full_name": s.Owner + "/" + s.Name},
		"commit_url": s.repoURL() + "/commits/" + sha, "url": s.repoURL() + "/commits/" + sha + "/status"})
}

func (s *Stub) checkRuns(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	sha := s.refSHA(r.PathValue("ref"))
	s.mu.Lock()
	list := []any{}
	for _, c := range s.runs[sha] {
		var concl any
		if c.Status == "completed" {
			concl = c.Conclusion
		}
		list = append(list, map[string]any{"id": c.ID, "head_sha": sha, "node_id": fmt.Sprintf("CR_%d", c.ID), "external_id": "",
			"url": s.repoURL() + "/check-runs/" + strconv.FormatInt(c.ID, 10), "html_url": s.repoHTMLURL() + "/runs/" + strconv.FormatInt(c.ID, 10),
			"details_url": nil, "status": c.Status, "conclusion": concl, "started_at": stamp(s.tick()), "completed_at": nil,
			"output": map[string]any{"title": nil, "summary": nil, "text": nil, "annotations_count": 0}, "name": c.Name,
			"app": map[string]any{"id": 1, "slug": "ci", "name": "CI"}, "pull_requests": []any{}})
	}
	s.mu.Unlock()
	s.ok(w, r, map[string]any{"total_count": len(list), "check_runs": list})
}

// refSHA takes a commit id or a branch name, as GitHub's commit endpoints do.
func (s *Stub) refSHA(ref string) string {
	if sha, ok := s.ResolveRef(ref); ok {
		return sha
	}
	return ref
}
