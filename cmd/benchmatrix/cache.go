package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"benchmatrix/cache"
	"benchmatrix/catalog"
	"benchmatrix/exitcode"
)

const cacheUsage = `Usage:
  benchmatrix cache ls [--dir DIR]                  the entries: id, size, last use, what data
  benchmatrix cache rm [--dir DIR] ID...            remove entries
  benchmatrix cache prune [--dir DIR] [--max-size SIZE]
                                                    evict the least recently used entries down to SIZE
                                                    (default 20G; 0 empties the cache)
The directory is [server] cache of a manifest; the default is $BENCHMATRIX_DATA_CACHE, else
$XDG_CACHE_HOME/benchmatrix, else ~/.cache/benchmatrix.
`

// cmdCache is `benchmatrix cache ls|rm|prune`: the data cache across runs.
func cmdCache(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, cacheUsage)
		return exitcode.Usage
	}
	sub := args[0]
	fs := flag.NewFlagSet("cache "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, cacheUsage) }
	dir := fs.String("dir", "", "cache directory")
	maxSize := "20G"
	if sub == "prune" {
		fs.StringVar(&maxSize, "max-size", maxSize, "size to prune down to")
	}
	rest, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return exitcode.Usage
	}
	if *dir == "" {
		d, err := cache.DefaultDir()
		if err != nil {
			fmt.Fprintf(stderr, "benchmatrix cache: %v\n", err)
			return exitcode.Usage
		}
		if d == cache.Off {
			fmt.Fprintf(stderr, "benchmatrix cache: $%s is off; give --dir DIR\n", cache.EnvVar)
			return exitcode.Usage
		}
		*dir = d
	}
	switch sub {
	case "ls":
		if len(rest) > 0 {
			fmt.Fprintf(stderr, "benchmatrix cache ls: unexpected %q\n%s", rest[0], cacheUsage)
			return exitcode.Usage
		}
		return cacheList(*dir, stdout, stderr)
	case "rm":
		if len(rest) == 0 {
			fmt.Fprintf(stderr, "benchmatrix cache rm: want one or more entry ids (benchmatrix cache ls)\n")
			return exitcode.Usage
		}
		return cacheRemove(*dir, rest, stdout, stderr)
	case "prune":
		if len(rest) > 0 {
			fmt.Fprintf(stderr, "benchmatrix cache prune: unexpected %q\n%s", rest[0], cacheUsage)
			return exitcode.Usage
		}
		limit := int64(0)
		if strings.TrimSpace(maxSize) != "0" {
			n, err := catalog.ParseBytes(maxSize)
			if err != nil {
				fmt.Fprintf(stderr, "benchmatrix cache prune: --max-size: %v\n", err)
				return exitcode.Usage
			}
			limit = n
		}
		return cachePrune(*dir, limit, stdout, stderr)
	}
	fmt.Fprintf(stderr, "benchmatrix cache: unknown command %q\n%s", sub, cacheUsage)
	return exitcode.Usage
}

func cacheList(dir string, stdout, stderr io.Writer) int {
	c, err := cache.Open(dir, 0)
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix cache ls: %v\n", err)
		return exitcode.Failure
	}
	all, err := c.List()
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix cache ls: %v\n", err)
		return exitcode.Failure
	}
	fmt.Fprintf(stdout, "data cache %s: ", dir)
	var total int64
	for _, e := range all {
		total += e.Size
	}
	fmt.Fprintf(stdout, "%d entries, %s\n", len(all), cache.Bytes(total))
	if len(all) == 0 {
		return exitcode.OK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSIZE\tLAST USE\tDATA")
	for _, e := range all {
		what := e.Key.Summary()
		if e.Key.Shape == "" {
			what = "(unreadable entry.json)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.ID, cache.Bytes(e.Size), e.LastUse.Local().Format(time.DateTime), what)
	}
	tw.Flush()
	return exitcode.OK
}

func cacheRemove(dir string, ids []string, stdout, stderr io.Writer) int {
	c, err := cache.Open(dir, 0)
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix cache rm: %v\n", err)
		return exitcode.Failure
	}
	code := exitcode.OK
	for _, id := range ids {
		if err := c.Remove(id); err != nil {
			fmt.Fprintf(stderr, "benchmatrix cache rm: %v\n", err)
			if errors.Is(err, cache.ErrNotFound) || errors.Is(err, cache.ErrBadID) {
				code = max(code, exitcode.Usage)
			} else {
				code = exitcode.Failure
			}
			continue
		}
		fmt.Fprintf(stdout, "removed %s\n", id)
	}
	return code
}

func cachePrune(dir string, limit int64, stdout, stderr io.Writer) int {
	c, err := cache.Open(dir, 0)
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix cache prune: %v\n", err)
		return exitcode.Failure
	}
	if limit == 0 {
		limit = -1 // everything not in use
	}
	evicted, err := c.Prune(limit, "")
	for _, e := range evicted {
		fmt.Fprintf(stdout, "evicted %s (%s, last used %s)\n", e.ID, cache.Bytes(e.Size), e.LastUse.Local().Format(time.DateTime))
	}
	if err != nil {
		fmt.Fprintf(stderr, "benchmatrix cache prune: %v\n", err)
		return exitcode.Failure
	}
	if len(evicted) == 0 {
		fmt.Fprintln(stdout, "nothing to evict")
	}
	return exitcode.OK
}
