// Package docscheck holds a test that keeps the README a front door: short,
// with its screenshot, and with every link into docs/ resolving to a file
// and a heading that exist; and docs/cli.md's CSV columns the CSV's. It
// has no code of its own.
package docscheck
