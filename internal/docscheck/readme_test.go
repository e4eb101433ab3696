package docscheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository, two levels above this package.
const root = "../.."

// maxReadmeLines is issue 22's bound: the README is a front door, the
// reference lives in docs/.
const maxReadmeLines = 150

var (
	// mdLink matches [text](target) and ![alt](target); the target ends
	// at the first ')' or space (a title after it is not used here).
	mdLink  = regexp.MustCompile(`(!?)\[[^\]]*\]\(([^)\s]+)[^)]*\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	// slugDrop is what GitHub drops from a heading to make its anchor.
	slugDrop = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatalf("read %s: %v", rel, err)
	}
	return string(b)
}

// slug is GitHub's anchor for a heading: lower case, punctuation dropped,
// spaces as hyphens.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	return strings.ReplaceAll(slugDrop.ReplaceAllString(h, ""), " ", "-")
}

func anchors(text string) map[string]bool {
	got := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(text, -1) {
		got[slug(m[1])] = true
	}
	return got
}

func TestReadmeIsAFrontDoor(t *testing.T) {
	readme := read(t, "README.md")
	if n := strings.Count(readme, "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, at most %d: move reference text to docs/", n, maxReadmeLines)
	}
	shot := false
	for _, m := range mdLink.FindAllStringSubmatch(readme, -1) {
		if m[1] == "!" && m[2] == "docs/explorer.png" {
			shot = true
		}
	}
	if !shot {
		t.Error("README.md has no ![…](docs/explorer.png): the screenshot of the explorer")
	}
	if _, err := os.Stat(filepath.Join(root, "docs/explorer.png")); err != nil {
		t.Errorf("the screenshot is missing (make it with docs/screenshot.sh): %v", err)
	}
}

// TestDocLinksResolve checks every relative link of the README and of
// docs/*.md: the file exists, and a #fragment names a heading in it.
func TestDocLinksResolve(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md (%v)", err)
	}
	docs := []string{"README.md"}
	for _, f := range files {
		docs = append(docs, filepath.ToSlash(strings.TrimPrefix(f, root+string(filepath.Separator))))
	}
	intoDocs := 0
	for _, doc := range docs {
		for _, m := range mdLink.FindAllStringSubmatch(read(t, doc), -1) {
			target := m[2]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			rel := doc
			if path != "" {
				rel = filepath.ToSlash(filepath.Join(filepath.Dir(doc), path))
			}
			if doc == "README.md" && strings.HasPrefix(rel, "docs/") && strings.HasSuffix(rel, ".md") {
				intoDocs++
			}
			checkTarget(t, doc, target, rel, frag)
		}
	}
	if intoDocs == 0 {
		t.Error("README.md links to no docs/*.md: it must say where to read next")
	}
}

func checkTarget(t *testing.T, doc, target, rel, frag string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
		t.Errorf("%s links to %s: %v", doc, target, err)
		return
	}
	if frag == "" || !strings.HasSuffix(rel, ".md") {
		return
	}
	if !anchors(read(t, rel))[frag] {
		t.Errorf("%s links to %s: %s has no heading whose anchor is #%s", doc, target, rel, frag)
	}
}

// seedTitle is the series every mention of "the seed" stands for.
const seedTitle = "io: Increase unix stream socket buffer size"

// TestTheSeedIsNamed: a doc that says "the seed" also names the series or
// links to the README's section that does.
func TestTheSeedIsNamed(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(b)), " ")
		if !strings.Contains(strings.ToLower(text), "the seed") {
			continue
		}
		if !strings.Contains(text, seedTitle) {
			t.Errorf("%s says \"the seed\" without naming the qemu-devel series %q", f, seedTitle)
		}
	}
}
