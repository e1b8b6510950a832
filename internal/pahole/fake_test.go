package pahole

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// fakeEnv makes the test binary, run as pahole, a pahole that never
// finishes: "grow" allocates and touches memory at about 200 MB/s up to
// fakeGrowCap, then sleeps. It first writes its process ID to the file
// fakePIDEnv names, so a test can kill it when Encode does not.
const (
	fakeEnv     = "BTFEMBED_FAKE_PAHOLE"
	fakePIDEnv  = "BTFEMBED_FAKE_PAHOLE_PID"
	fakeGrowCap = 1 << 30
)

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "grow" {
		if f := os.Getenv(fakePIDEnv); f != "" {
			_ = os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o600)
		}
		var held [][]byte
		for len(held)*(4<<20) < fakeGrowCap {
			b := make([]byte, 4<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			held = append(held, b)
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(time.Hour)
		os.Exit(len(held))
	}
	os.Exit(m.Run())
}
