package executor

import "github.com/ptcx/ptcx/api"

// validate is phase 3: the arguments against the tool's input schema, every
// violation listed, and run_code's program against the deployment's size
// limit.
func (x *execution) validate() bool {
	if x.def.Transport() && !x.checkLanguage() {
		return false
	}
	if err := x.def.Validate(&x.in); err != nil {
		err.Message = "invalid arguments for " + x.req.Tool + ": " + err.Message
		x.fail(err)
		return false
	}
	return !x.def.Transport() || x.checkCodeSize()
}

// invalidArgs is an INVALID_ARGS refusal of tool's arguments for one
// problem at the JSON pointer at; advice, when not empty, follows the
// problem in the message (not in the violation).
func invalidArgs(tool, at, problem, advice string) *api.Error {
	msg := "invalid arguments for " + tool + ": " + problem
	if advice != "" {
		msg += "; " + advice
	}
	return &api.Error{Code: api.CodeInvalidArgs, Message: msg, Violations: []string{"at " + at + ": " + problem}}
}
