// Command echoinit is the /init of the harness's own tests: it reports the
// running kernel's release and the command line's vmtest.echo word, then
// does what vmtest.end says: "done" powers off cleanly, "fail" reports a
// failure, "crash" exits without reporting the end (the kernel panics).
package main

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/btfembed/btfembed/internal/vmtest"
)

func main() {
	g, err := vmtest.StartGuest()
	if err != nil {
		os.Exit(2)
	}
	var u unix.Utsname
	unix.Uname(&u)
	g.Emit("echo", map[string]string{
		"release": unix.ByteSliceToString(u.Release[:]),
		"echo":    g.Cmdline["vmtest.echo"],
	})
	switch g.Cmdline["vmtest.end"] {
	case "fail":
		g.Done(errors.New("asked to fail"))
	case "crash":
		os.Exit(3)
	}
	g.Done(nil)
}
