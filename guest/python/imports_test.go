package python

import (
	"sort"
	"strings"
	"testing"
)

// The module's imports are the ABI's (docs/abi.md, "Python guest"): every
// import of module ptcx, poll included (the host's meter calls it), and the
// WASI calls listed there.
func TestImports(t *testing.T) {
	_, compiled := compiledGuest(t)
	var ptcx, wasi []string
	for _, f := range compiled.ImportedFunctions() {
		mod, name, _ := f.Import()
		switch mod {
		case "ptcx":
			ptcx = append(ptcx, name)
		case "wasi_snapshot_preview1":
			wasi = append(wasi, name)
		default:
			t.Errorf("import %s.%s", mod, name)
		}
	}
	sort.Strings(ptcx)
	sort.Strings(wasi)
	if got := strings.Join(ptcx, " "); got != "call error log poll result timer_clear timer_set" {
		t.Errorf("ptcx imports: %s", got)
	}
	if got := strings.Join(wasi, " "); got != wasiImports {
		t.Errorf("WASI imports: %s", got)
	}
}

const wasiImports = "clock_res_get clock_time_get environ_get environ_sizes_get fd_advise fd_close fd_datasync " +
	"fd_fdstat_get fd_fdstat_set_flags fd_filestat_get fd_filestat_set_size fd_filestat_set_times fd_pread " +
	"fd_prestat_dir_name fd_prestat_get fd_pwrite fd_read fd_readdir fd_seek fd_sync fd_tell fd_write " +
	"path_create_directory path_filestat_get path_filestat_set_times path_link path_open path_readlink " +
	"path_remove_directory path_rename path_symlink path_unlink_file poll_oneoff proc_exit random_get " +
	"sched_yield sock_accept sock_recv sock_send sock_shutdown"
