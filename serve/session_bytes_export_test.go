package serve

import (
	"context"

	"github.com/ptcx/ptcx/serve/internal/cluster"
	"github.com/ptcx/ptcx/serve/store"
)

// SessionKey is the key of session (scope, name) of tenant's record.
func SessionKey(tenant, scope, name string) string { return sessionKeyOf(tenant, scope, name) }

// SessionRecord reads session (scope, name) of tenant's record from s's
// store (its cluster's, or its own in memory).
func SessionRecord(s *Server, tenant, scope, name string) (store.SessionRecord, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	return s.states.st.GetSession(ctx, sessionKeyOf(tenant, scope, name))
}

// EditSessionRecord rewrites session (scope, name) of tenant's record in
// s's store as edit changes it (revision-checked), as someone with write
// access to the store could.
func EditSessionRecord(s *Server, tenant, scope, name string, edit func(r *store.SessionRecord)) error {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	r, err := s.states.st.GetSession(ctx, sessionKeyOf(tenant, scope, name))
	if err != nil {
		return err
	}
	edit(&r)
	_, err = s.states.st.UpdateSession(ctx, r)
	return err
}

// SessionObject reads the object of that name from s's session store.
func SessionObject(s *Server, name string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	return s.states.st.GetSnapshot(ctx, name)
}

// PutSessionObject writes an object of that name to s's session store.
func PutSessionObject(s *Server, name string, data []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), cluster.StoreTimeout)
	defer cancel()
	return s.states.st.PutSnapshot(ctx, name, data)
}
