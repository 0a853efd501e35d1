package payonce

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README and the pages under docs/ quote code, vectors and commands that
// live elsewhere; these tests keep the quotes true and the links working.

// maxReadmeSize keeps the README readable in a few minutes; long material
// belongs in docs/.
const maxReadmeSize = 12 << 10

// readDoc returns the text of a documentation file of the repository.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return string(b)
}

// funcSource returns the Go function named name from src, up to its closing
// brace at the start of a line.
func funcSource(t *testing.T, src, name string) string {
	t.Helper()
	i := strings.Index(src, "func "+name+"(")
	require.GreaterOrEqual(t, i, 0, "func %s not found", name)
	j := strings.Index(src[i:], "\n}\n")
	require.Greater(t, j, 0)
	return src[i : i+j+2]
}

func TestDocsMerchantTestIsTheRealOne(t *testing.T) {
	page := readDoc(t, "docs/testing.md")
	src := readDoc(t, "a55/a55test/merchant_test.go")
	for _, name := range []string{"checkout", "TestCheckoutChargesOnceWhenTheAnswerIsLost"} {
		assert.Equal(t, funcSource(t, src, name), funcSource(t, page, name), name)
	}
}

func TestReadmeStartsWithTheInstallLine(t *testing.T) {
	readme := readDoc(t, "README.md")
	first := regexp.MustCompile("(?s)```(\\w*)\n(.*?)```").FindStringSubmatch(readme)
	require.Len(t, first, 3, "no code block")
	assert.Equal(t, "sh", first[1])
	assert.Equal(t, "go get github.com/payonce/payonce", strings.TrimSpace(first[2]), "the README's first code block is the install line")
}

func TestReadmeHasTheTwoSetUpCommands(t *testing.T) {
	readme := readDoc(t, "README.md")
	block := regexp.MustCompile("(?s)## Set-up: the two commands\n\n```sh\n(.*?)```").FindStringSubmatch(readme)
	require.Len(t, block, 2)
	lines := strings.Split(strings.TrimSpace(block[1]), "\n")
	require.Len(t, lines, 2)
	assert.True(t, strings.HasPrefix(lines[0], "go run ./cmd/chaos "))
	assert.True(t, strings.HasPrefix(lines[1], "go test -race ./... "))
}

func TestReadmeIsShort(t *testing.T) {
	fi, err := os.Stat("README.md")
	require.NoError(t, err)
	assert.LessOrEqual(t, fi.Size(), int64(maxReadmeSize), "README.md is %d bytes: move long material into docs/", fi.Size())
}

// Every module the project requires directly has a row, with its version,
// in the README's Dependencies table.
func TestReadmeListsEveryDependency(t *testing.T) {
	readme := readDoc(t, "README.md")
	mods := directRequirements(t, readDoc(t, "go.mod"))
	require.NotEmpty(t, mods)
	for mod, version := range mods {
		assert.True(t, strings.Contains(readme, "| "+mod+" | "+version+" |"), "README.md's Dependencies table lacks a row for %s %s and why it is needed", mod, version)
	}
}

// directRequirements returns the modules go.mod requires without an
// "// indirect" comment, with their versions.
func directRequirements(t *testing.T, gomod string) map[string]string {
	t.Helper()
	mods := map[string]string{}
	inBlock := false
	for line := range strings.Lines(gomod) {
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			inBlock = true
			continue
		case inBlock && line == ")":
			inBlock = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !inBlock:
			continue
		}
		if line == "" || strings.Contains(line, "// indirect") {
			continue
		}
		f := strings.Fields(line)
		require.GreaterOrEqual(t, len(f), 2, "go.mod line %q", line)
		mods[f[0]] = f[1]
	}
	return mods
}

// No file of the repository cites documents that live outside it: what the
// project relies on is written in its own words, in docs/. The needles are
// built from parts so that this file does not match itself. .ci/ is left
// out (its scripts may name the machine's paths); so is .git/.
func TestNoFileCitesOutsideDocuments(t *testing.T) {
	t.Parallel() // reads every file of the tree
	needles := [][]byte{
		[]byte("shared" + "/seeds"),
		[]byte("shared" + "/docs"),
		[]byte("api" + "-facts"),
		[]byte("seed " + "document"),
	}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == ".git" || p == ".ci" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if i := indexFold(b, n); i >= 0 {
				line := bytes.Count(b[:i], []byte("\n")) + 1
				t.Errorf("%s:%d cites %q, a document outside the repository", p, line, n)
			}
		}
		return nil
	})
	require.NoError(t, err)
}

// indexFold returns the index of the first match of needle, lower-case
// ASCII, in b in any case, or -1. The tree holds a large binary:
// lowering a copy of each file costs seconds under -race, while
// bytes.Index finds the needle's first two bytes, in each of their cases,
// at memory speed and EqualFold checks the rest of each candidate.
func indexFold(b, needle []byte) int {
	up := func(c byte) byte { return bytes.ToUpper([]byte{c})[0] }
	a, c := needle[0], needle[1]
	first := -1
	for _, p := range [][]byte{{a, c}, {up(a), c}, {a, up(c)}, {up(a), up(c)}} {
		for off := 0; ; {
			i := bytes.Index(b[off:], p)
			if i < 0 || first >= 0 && off+i >= first {
				break
			}
			if j := off + i; j+len(needle) <= len(b) && bytes.EqualFold(b[j:j+len(needle)], needle) {
				first = j
				break
			}
			off += i + 1
		}
	}
	return first
}

func TestIndexFold(t *testing.T) {
	n := []byte("api" + "-facts")
	for in, want := range map[string]int{
		"api" + "-facts": 0, "see API" + "-Facts": 4, "aPI" + "-FACTS and api" + "-facts": 0, "ap api" + "-facts": 3,
		"api" + "-fact": -1, "api" + " facts": -1, "": -1, "a": -1, "x api" + "-facts api": 2,
	} {
		assert.Equal(t, want, indexFold([]byte(in), n), "%q", in)
	}
}

// markdownLink matches the target of an inline link or image, [text](target)
// or [text](target "title"), and of a reference definition, [id]: target.
var markdownLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|(?m)^\s*\[[^\]]+\]:\s*<?(\S+?)>?\s*$`)

// Every relative link of README.md and docs/*.md points to a file or
// directory of the repository and, when it names an anchor, to a heading of
// the page it links (a link of a page to its own anchor included).
func TestDocLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	pages = append([]string{"README.md"}, pages...)
	checked, anchors := 0, 0
	pageAnchors := map[string]map[string]bool{} // by page, read once
	for _, page := range pages {
		text := readDoc(t, page)
		for _, m := range markdownLink.FindAllStringSubmatch(stripCodeBlocks(text), -1) {
			target := m[1] + m[2]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			file, _, _ = strings.Cut(file, "?")
			resolved := filepath.ToSlash(page)
			if file != "" {
				resolved = path.Clean(path.Join(path.Dir(filepath.ToSlash(page)), file))
			}
			checked++
			if strings.HasPrefix(resolved, "../") || path.IsAbs(file) {
				t.Errorf("%s links %q, outside the repository", page, target)
				continue
			}
			if _, err := os.Stat(filepath.FromSlash(resolved)); err != nil {
				t.Errorf("%s links %q: %s does not exist", page, target, resolved)
				continue
			}
			if anchor == "" {
				continue
			}
			anchors++
			if !strings.HasSuffix(resolved, ".md") {
				t.Errorf("%s links %q: an anchor in a file that is not a page", page, target)
				continue
			}
			if pageAnchors[resolved] == nil {
				pageAnchors[resolved] = headingAnchors(readDoc(t, filepath.FromSlash(resolved)))
			}
			if !pageAnchors[resolved][anchor] {
				t.Errorf("%s links %q: %s has no heading with the anchor #%s", page, target, resolved, anchor)
			}
		}
	}
	assert.Greater(t, checked, 10, "the link pattern found almost no links")
	assert.Greater(t, anchors, 10, "the link pattern found almost no anchors")
}

// headingAnchors returns the anchors a Markdown renderer gives the headings
// of md, as GitHub makes them: the heading's text lowercased, every
// character but letters, digits, spaces, hyphens and underscores dropped,
// spaces turned into hyphens, and -1, -2… added to a repeated one.
func headingAnchors(md string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for line := range strings.Lines(stripCodeBlocks(md)) {
		line = strings.TrimRight(line, "\n")
		hashes := len(line) - len(strings.TrimLeft(line, "#"))
		if hashes == 0 || hashes > 6 || !strings.HasPrefix(line[hashes:], " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(line[hashes:])) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

func TestHeadingAnchors(t *testing.T) {
	a := headingAnchors("# Top\n\n## Job workers: `payonce.WithExplicitKeys()`\n\n```sh\n# not a heading\n```\n\n### The key's age\n\n## Limits\n\n## Limits\n")
	assert.Equal(t, map[string]bool{"top": true, "job-workers-payoncewithexplicitkeys": true, "the-keys-age": true, "limits": true, "limits-1": true}, a)
}

// The README's Documentation table has one row per page of docs/, each
// linking its page and saying what question it answers.
func TestReadmeIndexesEveryPage(t *testing.T) {
	readme := readDoc(t, "README.md")
	i := strings.Index(readme, "## Documentation\n")
	require.GreaterOrEqual(t, i, 0, "README.md has no Documentation section")
	index := readme[i:]
	if j := strings.Index(index[1:], "\n## "); j >= 0 {
		index = index[:j+1]
	}
	pages, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	for _, page := range pages {
		link := "](" + filepath.ToSlash(page) + ")"
		rows := 0
		for line := range strings.Lines(index) {
			if strings.HasPrefix(line, "| [") && strings.Contains(line, link) {
				rows++
				assert.True(t, strings.HasSuffix(strings.TrimSpace(line), "? |"), "README.md's row for %s does not end with the question the page answers", page)
			}
		}
		assert.Equal(t, 1, rows, "README.md's Documentation table should have one row for %s", page)
	}
	assert.Contains(t, readDoc(t, "docs/testing.md"), "](console.png)", "the testing page shows the console's screenshot")
}

// codeBlock matches a fenced code block.
var codeBlock = regexp.MustCompile("(?s)```.*?```")

// stripCodeBlocks blanks fenced code blocks, whose brackets are code, not
// links.
func stripCodeBlocks(md string) string {
	return codeBlock.ReplaceAllString(md, "")
}
