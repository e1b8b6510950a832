package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

const versionSummary = "print btfembed's module version and VCS revision"

// modulePath is btfembed's module, looked for in the build information:
// it is the main module when btfembed is built in its own clone, and a
// dependency when it runs as a tool of another module (go tool btfembed).
const modulePath = "github.com/btfembed/btfembed"

// versionLine is what "btfembed version" prints, from the build
// information Go records in every binary, as "go version -m" shows it:
// the module version (and its replacement, for a local clone), the VCS
// revision, time and modified flag when the build recorded them, and the
// Go version.
func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "btfembed: no build information in this binary"
	}
	return formatVersion(info)
}

func formatVersion(info *debug.BuildInfo) string {
	parts := []string{"btfembed"}
	mod := &info.Main
	if mod.Path != modulePath {
		mod = nil
		for _, d := range info.Deps {
			if d.Path == modulePath {
				mod = d
				break
			}
		}
	}
	switch {
	case mod == nil:
		parts = append(parts, "(unknown version)")
	case mod.Replace != nil:
		// A local directory's version is "(devel)", which says nothing more.
		repl := mod.Replace.Path
		if strings.HasPrefix(mod.Replace.Version, "v") {
			repl += " " + mod.Replace.Version
		}
		parts = append(parts, mod.Version, "=>", repl)
	default:
		parts = append(parts, mod.Version)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		vcs := "revision " + rev
		if t := settings["vcs.time"]; t != "" {
			vcs += " " + t
		}
		if settings["vcs.modified"] == "true" {
			vcs += " (modified)"
		}
		parts = append(parts, vcs)
	}
	parts = append(parts, fmt.Sprintf("(%s)", info.GoVersion))
	return strings.Join(parts, " ")
}
