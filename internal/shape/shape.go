package shape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The limits the check holds the library to.
const (
	// MaxFileLines is the most lines a library file may have.
	MaxFileLines = 900
	// MaxFuncLines is the most lines a function may have without a
	// "Long:" line that says why.
	MaxFuncLines = 80
)

// reasonTag starts the comment line that says why a function is long.
const reasonTag = "Long:"

// Finding is one place that breaks a limit.
type Finding struct {
	// File is the file's path, relative to the module root when found by
	// [Check], with forward slashes.
	File string
	// Line is where the function starts (its func keyword); 0 for a file.
	Line int
	// Func names the function (Name, or Recv.Name for a method); empty
	// for a file.
	Func string
	// Lines is the length of the file or function.
	Lines int
}

// String reads as one line of the test's report.
func (f Finding) String() string {
	if f.Func == "" {
		return fmt.Sprintf("%s: %d lines (file limit %d)", f.File, f.Lines, MaxFileLines)
	}
	return fmt.Sprintf("%s:%d: %s is %d lines (limit %d) and has no %q line saying why",
		f.File, f.Line, f.Func, f.Lines, MaxFuncLines, reasonTag)
}

// CheckSource parses one file's source and returns the limits it breaks,
// in source order: the file's length first, then each long function
// without a reason.
func CheckSource(name string, src []byte) ([]Finding, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []Finding
	if n := fset.File(f.Pos()).LineCount(); n > MaxFileLines {
		out = append(out, Finding{File: name, Lines: n})
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start := fset.Position(fd.Type.Func).Line
		n := fset.Position(fd.Body.Rbrace).Line - start + 1
		if n <= MaxFuncLines || hasReason(fset, f, fd) {
			continue
		}
		out = append(out, Finding{File: name, Line: start, Func: funcName(fd), Lines: n})
	}
	return out, nil
}

// hasReason reports whether fd's doc comment, or a comment on the first
// line of its body, has a line that starts with the tag and goes on to
// say something.
func hasReason(fset *token.FileSet, f *ast.File, fd *ast.FuncDecl) bool {
	if fd.Doc != nil && saysWhy(fd.Doc) {
		return true
	}
	first := fset.Position(fd.Body.Lbrace).Line + 1
	for _, cg := range f.Comments {
		if cg.Pos() < fd.Body.Lbrace {
			continue
		}
		if cg.Pos() > fd.Body.Rbrace {
			break
		}
		return fset.Position(cg.Pos()).Line == first && saysWhy(cg)
	}
	return false
}

// saysWhy reports whether a line of cg starts with the tag and a reason.
func saysWhy(cg *ast.CommentGroup) bool {
	for line := range strings.SplitSeq(cg.Text(), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), reasonTag); ok && strings.TrimSpace(rest) != "" {
			return true
		}
	}
	return false
}

// funcName is Name for a function and Recv.Name for a method, without the
// receiver's pointer or type parameters.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}

// ModuleRoot walks up from dir to the directory that holds go.mod.
func ModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above %s", dir)
		}
		dir = up
	}
}

// Check runs [CheckSource] on every library file under the module root:
// each non-test .go file outside examples/, testdata/, directories whose
// names start with "." or "_", and nested modules. Findings come sorted
// by file, then line.
func Check(root string) ([]Finding, error) {
	var out []Finding
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			name := d.Name()
			if rel == "examples" || name == "testdata" || name == "vendor" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found, err := CheckSource(rel, src)
		if err != nil {
			return err
		}
		out = append(out, found...)
		return nil
	})
	slices.SortStableFunc(out, func(a, b Finding) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return out, err
}
