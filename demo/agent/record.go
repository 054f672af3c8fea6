package agent

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// InputsLogName is the file in a script's record_dir that logs every
// submitted message, one JSON InputRecord per line.
const InputsLogName = "inputs.log"

// Kinds of submitted message in the inputs log.
const (
	InputBrief    = "brief"
	InputDecision = "decision"
	InputRefusal  = "refusal"
	InputOther    = "other"
)

// WritesLogName is the file in a script's record_dir that logs every file
// the agent wrote into its working directory, one JSON WriteRecord per
// line: the agent's own account of when it worked, which the fault run's
// checker holds against the ledger's end of its session.
const WritesLogName = "writes.log"

// WriteRecord is one line of the writes log.
type WriteRecord struct {
	// At is when the write had returned: the file changed at or before it.
	At   time.Time `json:"at"`
	Path string    `json:"path"` // relative to the working directory
	// Session is the session the agent ran as (its ORCHESTRA_SESSION mark).
	Session string `json:"session,omitempty"`
}

// InputRecord is one line of the inputs log.
type InputRecord struct {
	At   time.Time `json:"at"`
	Kind string    `json:"kind"`
	Text string    `json:"text"`
	// Session is the session the agent ran as (its ORCHESTRA_SESSION
	// mark), so a check can count deliveries per session.
	Session string `json:"session,omitempty"`
}

// recorder writes what the agent received into the script's record_dir, so
// tests (and the demo's checks) can assert delivery exactly once. A zero
// recorder records nothing.
type recorder struct {
	dir string
	now func() time.Time
}

// input appends one record to the inputs log.
func (r recorder) input(kind, text string) error {
	return r.append(InputsLogName, InputRecord{At: r.now().UTC(), Kind: kind, Text: text, Session: os.Getenv(session.SessionEnv)})
}

// wrote appends one record to the writes log: the agent wrote rel.
func (r recorder) wrote(rel string) error {
	return r.append(WritesLogName, WriteRecord{At: r.now().UTC(), Path: rel, Session: os.Getenv(session.SessionEnv)})
}

// append appends rec, as one JSON line, to the log name in the record
// dir. Each record is one write on an O_APPEND file, so sessions sharing
// a record_dir do not interleave.
func (r recorder) append(name string, rec any) error {
	if r.dir == "" {
		return nil
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return fmt.Errorf("record dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(r.dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	_, werr := f.Write(append(line, '\n'))
	return errors.Join(werr, f.Close())
}

// brief writes a received brief to brief-<phase>-<attempt>-<n>.md with the
// first n not yet taken, so a relaunched session never overwrites the brief
// an earlier one received.
func (r recorder) brief(b Brief) error {
	if r.dir == "" {
		return nil
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return fmt.Errorf("record dir: %w", err)
	}
	for n := 1; n < 10000; n++ {
		name := filepath.Join(r.dir, fmt.Sprintf("brief-%s-%d-%d.md", b.Phase, b.Attempt, n))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("record brief: %w", err)
		}
		_, werr := f.WriteString(b.Text)
		return errors.Join(werr, f.Close())
	}
	return fmt.Errorf("record brief: too many briefs for %s attempt %d", b.Phase, b.Attempt)
}

// ReadInputLog reads the inputs log of a record_dir. A missing log is an
// empty one: nothing was submitted yet.
func ReadInputLog(recordDir string) ([]InputRecord, error) {
	return readLog[InputRecord](recordDir, InputsLogName)
}

// ReadWriteLog reads the writes log of a record_dir. A missing log is an
// empty one: nothing was written yet.
func ReadWriteLog(recordDir string) ([]WriteRecord, error) {
	return readLog[WriteRecord](recordDir, WritesLogName)
}

// readLog reads the JSON lines of the log name in recordDir.
func readLog[T any](recordDir, name string) ([]T, error) {
	f, err := os.Open(filepath.Join(recordDir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		var rec T
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, len(out)+1, err)
		}
		out = append(out, rec)
	}
	return out, sc.Err()
}
