package corpus

import (
	"fmt"
	"io"

	"github.com/btfembed/btfembed/internal/btfhub"

	"github.com/ulikunitz/xz"
)

// btfhubSuffix ends every kernel file of the BTFHub-archive layout.
const btfhubSuffix = ".btf.tar.xz"

// writeBTFHub writes raw BTF as a BTFHub archive file: xz(tar(<release>.btf)).
// The output depends only on its inputs: the tar header carries no time,
// owner or host name.
func writeBTFHub(w io.Writer, release string, btf []byte) error {
	xw, err := xz.WriterConfig{}.NewWriter(w)
	if err != nil {
		return fmt.Errorf("xz: %w", err)
	}
	if err := btfhub.WriteTar(xw, release, btf); err != nil {
		return err
	}
	if err := xw.Close(); err != nil {
		return fmt.Errorf("xz: %w", err)
	}
	return nil
}
