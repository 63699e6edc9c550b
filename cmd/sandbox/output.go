package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// colour reports whether w is a terminal that wants colour: never for a
// pipe or file, never with NO_COLOR set.
func colour(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func paint(on bool, code, s string) string {
	if !on {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// wrap breaks s into lines of at most width runes, each prefixed by indent
// after the first.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		if i > 0 && line+1+len(word) > width {
			b.WriteString("\n" + indent)
			line = 0
		} else if i > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += len(word)
	}
	return b.String()
}

func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func yesNo(b bool) string {
	if b {
		return "enforced"
	}
	return "not enforced"
}

// featureLine prints one capability in 80 columns:
//
//	name                 enforced      detail, wrapped
func featureLine(w io.Writer, on bool, name string, enforced bool, detail, hint string) {
	const indent = "                                     "
	mark := paint(on, "32", "enforced    ")
	if !enforced {
		mark = paint(on, "31;1", "NOT enforced")
	}
	fmt.Fprintf(w, "  %-20s %s  %s\n", name, mark, wrap(detail, 80-len(indent), indent))
	if hint != "" {
		fmt.Fprintf(w, "%shint: %s\n", indent, wrap(hint, 80-len(indent)-6, indent+"      "))
	}
}
