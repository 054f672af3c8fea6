package coord

import "context"

// signatureHook refuses a task whose signature the fleet key does not
// accept (signature.go): nothing of it runs.
type signatureHook struct{ key *signer }

func (signatureHook) name() string { return "signature" }

func (h signatureHook) prestart(_ context.Context, req *prestartRequest, _ *prestartResponse) error {
	if err := h.key.check(req.task); err != nil {
		return signatureRefusal(err)
	}
	return nil
}
