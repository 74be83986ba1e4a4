package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReadmeWalk walks through the README as a newcomer does: in a fresh copy of the
// repository's files (what git tracks or would, committed to a repository of their own in a
// temporary directory), it runs every command of every sh block, in order, with the profq built from
// this checkout on PATH, and checks that each exits as the README says (0, or the code a
// preceding "# Exit N" comment names) and that the copy is as clean afterwards as before:
// no example leaves a file that git would see. readme.txtar checks what they print.
func TestReadmeWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the repository and runs every README example: the full suite runs it")
	}
	for _, tool := range []string{"git", "go", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the README's examples need %s, which is not installed", tool)
		}
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	clone := filepath.Join(dir, "profq")
	bin := filepath.Join(dir, "bin")
	run := func(dir string, env []string, name string, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			return out.String(), exit.ExitCode()
		case err != nil:
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return out.String(), 0
	}
	mustRun := func(dir string, name string, args ...string) string {
		t.Helper()
		out, code := run(dir, nil, name, args...)
		if code != 0 {
			t.Fatalf("%s %v: exit %d: %s", name, args, code, out)
		}
		return out
	}
	// The files a fresh clone has, as the working tree has them: tracked, and new ones git
	// does not ignore (a change not committed yet).
	files := strings.Split(strings.TrimSpace(mustRun(repo, "git", "ls-files", "--cached", "--others", "--exclude-standard")), "\n")
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(repo, f))
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(clone, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := []string{"-c", "user.name=readme", "-c", "user.email=readme@profq.invalid", "-c", "commit.gpgsign=false"}
	mustRun(clone, "git", "init", "-q")
	mustRun(clone, "git", append(git, "add", "-A")...)
	mustRun(clone, "git", append(git, "commit", "-q", "-m", "checkout")...)
	mustRun(clone, "go", "build", "-o", filepath.Join(bin, "profq"), "./cmd/profq")
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "GIT_CEILING_DIRECTORIES=" + dir}

	ran := 0
	for _, c := range readmeCommands(string(readme)) {
		out, code := run(clone, env, "sh", "-c", c.line)
		if code != c.exit {
			t.Errorf("README: %s\nexit %d, want %d:\n%s", c.line, code, c.exit, out)
		}
		ran++
	}
	if ran < 20 {
		t.Errorf("ran %d commands of the README, want them all", ran)
	}
	if status := mustRun(clone, "git", "status", "--porcelain"); status != "" {
		t.Errorf("the README's examples left the checkout unclean:\n%s", status)
	}
}

// readmeCommand is one command of the README and the exit code it is said to have.
type readmeCommand struct {
	line string
	exit int
}

// exitComment is a comment that says what the next command exits with.
var exitComment = regexp.MustCompile(`(?i)^#.*\bexit (\d)\b`)

// readmeCommands are the commands of the README's sh blocks, continuation lines joined,
// without synopses ("profq top [flags] PROFILE..."), the install line (it fetches the
// latest release) and make test (this suite).
func readmeCommands(readme string) []readmeCommand {
	var out []readmeCommand
	in := false
	exit := 0
	pending := ""
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in, exit, pending = true, 0, ""
			continue
		case strings.HasPrefix(line, "```"):
			in = false
			continue
		case !in:
			continue
		}
		if m := exitComment.FindStringSubmatch(line); m != nil {
			exit, _ = strconv.Atoi(m[1])
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") || strings.TrimSpace(line) == "" {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			pending += strings.TrimSuffix(line, `\`) + " "
			continue
		}
		cmd := pending + line
		pending = ""
		switch {
		case strings.Contains(cmd, "[flags]"), strings.Contains(cmd, "BASE NEW"), strings.HasPrefix(cmd, "go install "),
			strings.HasPrefix(cmd, "make test"):
			continue
		}
		out = append(out, readmeCommand{cmd, exit})
		exit = 0
	}
	return out
}
