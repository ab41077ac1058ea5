package proc

import (
	"runtime"
	"sync"
)

// spawner is the goroutine every tree is started from. It is locked to its
// OS thread for the life of the process and never returns, so that thread
// never exits: PR_SET_PDEATHSIG fires when the thread that forked the child
// exits, and Go ends a thread whose goroutine exits while locked to it.
var spawner struct {
	once sync.Once
	reqs chan func()
}

// onSpawnThread runs f on the spawner's thread and returns when f has.
func onSpawnThread(f func()) {
	spawner.once.Do(func() {
		spawner.reqs = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: see spawner
			for req := range spawner.reqs {
				req()
			}
		}()
	})
	done := make(chan struct{})
	spawner.reqs <- func() {
		defer close(done)
		f()
	}
	<-done
}
