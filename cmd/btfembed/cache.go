package main

import (
	"fmt"
	"io"
	"time"

	"github.com/btfembed/btfembed/internal/cache"
)

const cacheHelp = `Usage: btfembed cache info
       btfembed cache clean

The cache keeps, per kernel file, its BTF as read (zstd compressed), and
per kernel and set of relocation groups the minimized and verified result
(an object that brings no new relocation group reuses it), so that a
rerun redoes only what changed, and per run its whole result, so that a
rerun that changed nothing does nothing else. Its directory is $BTFEMBED_CACHE, by
default btfembed in the user cache directory ($XDG_CACHE_HOME or
~/.cache on Linux); BTFEMBED_CACHE=off disables it. Entries unused for
five days are removed automatically.

  info   print the directory, the number of entries and their size
  clean  remove every entry
`

func runCache(stdout, stderr io.Writer, args []string) error {
	fs := newFlagSet("cache", cacheHelp, stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) != "info" && fs.Arg(0) != "clean" {
		fs.Usage()
		return fmt.Errorf("want 'cache info' or 'cache clean': %w", errUsage)
	}
	dir, err := cache.DirFromEnv()
	if err != nil {
		return err
	}
	if dir == "" {
		fmt.Fprintf(stdout, "cache off (%s=%s)\n", cache.EnvVar, cache.Off)
		return nil
	}
	c, err := cache.Open(dir)
	if err != nil {
		return err
	}
	if fs.Arg(0) == "clean" {
		if err := c.Clean(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed every entry of %s\n", dir)
		return nil
	}
	info, err := c.Info()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "directory:   %s\n", info.Dir)
	fmt.Fprintf(stdout, "entries:     %d (%.1f MB)\n", info.Entries, float64(info.Bytes)/1e6)
	fmt.Fprintf(stdout, "stat index:  %d files\n", info.StatEntries)
	fmt.Fprintf(stdout, "trim:        entries unused for %d days are removed; last trim %s\n",
		int(cache.TrimAge/(24*time.Hour)), info.LastTrim.UTC().Format(time.RFC3339))
	return nil
}
