package executor

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
