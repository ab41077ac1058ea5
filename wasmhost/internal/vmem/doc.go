// Package vmem is the virtual memory under a guest's linear memory: an
// anonymous reservation outside the Go heap that is backed as it is touched
// (Reserve), a sealed memfd mapped copy-on-write over it (SealedFile,
// MapFile), the page table read back to find the pages a run wrote
// (PrivatePages, MapsImage) so that a memory can be reset to the image
// (ResetBlocks), and the machine's memory (PhysicalMemory). Off Linux the
// functions report that they cannot, and the callers copy instead.
package vmem
