package executor

import (
	"fmt"

	"github.com/ptcx/ptcx/registry"
)

// routeExample is a one-line example of the right route for a tool.
func routeExample(s registry.Schema) string {
	return fmt.Sprintf(`run_code {"code": "return await tools.%s({...})", "description": "..."}`, s.Name)
}
