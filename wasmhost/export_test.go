package wasmhost

// ThreadCPU and ThreadClocks let the tests burn a given amount of CPU time
// on the guest's thread, however loaded the machine is.
var ThreadCPU = threadCPU

const ThreadClocks = threadClocks
