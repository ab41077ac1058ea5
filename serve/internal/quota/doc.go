// Package quota counts what a tenant of ptcx serve holds of what the
// server's tenants share, against its quotas (docs/service.md, "Admission and quotas"): its
// runs in flight and their committed memory and compute reservations
// (with a compute.Bucket), its executions that may wait on their client,
// its parked bytes, its event streams (Quota, admitting work in one Ticket
// with one release path) and its retained bytes (Retained). It decides,
// and says which bound was passed; the server words the answer. It imports
// only the standard library and serve/internal/compute.
package quota
