package osrelease

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// Release is what os-release(5) says about a distribution, as far as
// telling kernels apart needs: ID and VERSION_ID fill kernelkey.Key.Distro and
// kernelkey.Key.Version, and ID_LIKE names distributions to fall back on, in order.
type Release struct {
	ID, VersionID string
	IDLike        []string
}

// Parse reads os-release content: lines of KEY=value, values
// optionally quoted shell-style. Malformed lines are skipped.
func Parse(b []byte) Release {
	var r Release
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok {
			continue
		}
		if len(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[len(val)-1] == val[0] {
			if val[0] == '"' {
				if uq, err := strconv.Unquote(val); err == nil {
					val = uq
				} else {
					val = val[1 : len(val)-1]
				}
			} else {
				val = val[1 : len(val)-1]
			}
		}
		switch key {
		case "ID":
			r.ID = val
		case "VERSION_ID":
			r.VersionID = val
		case "ID_LIKE":
			r.IDLike = strings.Fields(val)
		}
	}
	return r
}
