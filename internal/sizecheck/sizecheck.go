// Package sizecheck keeps a package's files and functions short enough
// to read: a test of the package calls [Check] on its own directory.
//
//	func TestSizes(t *testing.T) { sizecheck.Check(t, ".") }
//
// A library file (not a _test.go file) may have at most [MaxFileLines]
// lines and a function at most [MaxFuncLines], unless the first line of
// its body is a comment that gives the reason it is kept whole:
//
//	func long() {
//		// Kept whole: one table of cases, each a few lines.
//		...
//	}
package sizecheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

const (
	// MaxFileLines is the most lines a library file may have.
	MaxFileLines = 900
	// MaxFuncLines is the most lines a function may have, from its
	// signature to its closing brace, unless it gives a reason.
	MaxFuncLines = 80
	// Reason starts the comment on the first line of the body of a
	// function kept longer.
	Reason = "Kept whole:"
)

// Check reports, as errors of t, each library file in dir over
// MaxFileLines and each function over MaxFuncLines without a reason.
func Check(t testing.TB, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fs := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fs, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if n := fs.Position(f.End()).Line; n > MaxFileLines {
			t.Errorf("%s: %d lines, more than %d", name, n, MaxFileLines)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fs.Position(fd.End()).Line - fs.Position(fd.Pos()).Line + 1
			if n <= MaxFuncLines || hasReason(fs, f, fd) {
				continue
			}
			t.Errorf("%s: %s is %d lines, more than %d, and its body does not start with a comment %q",
				fs.Position(fd.Pos()), fd.Name.Name, n, MaxFuncLines, Reason)
		}
	}
}

// hasReason reports whether the line after fd's opening brace is a
// comment that starts with Reason.
func hasReason(fs *token.FileSet, f *ast.File, fd *ast.FuncDecl) bool {
	line := fs.Position(fd.Body.Lbrace).Line + 1
	for _, c := range f.Comments {
		if fs.Position(c.Pos()).Line == line {
			return strings.HasPrefix(c.Text(), Reason)
		}
	}
	return false
}
