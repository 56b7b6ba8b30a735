package waterfall

import (
	"errors"
	"fmt"
)

// Error codes of the seed's UserQuestionError taxonomy, plus the few a
// service needs at its edges (NOT_FOUND, CALL_CONFLICT, UNAVAILABLE).
const (
	CodeEmptyQuestions  = "EMPTY_QUESTIONS"
	CodeBadRequest      = "BAD_REQUEST"
	CodeBadTimeout      = "BAD_TIMEOUT"
	CodeBadAnswer       = "BAD_ANSWER"
	CodeDelegatedCaller = "DELEGATED_CALLER"
	CodeCallerNotLive   = "CALLER_NOT_LIVE"
	CodeReplyQueued     = "REPLY_QUEUED"
	CodeAskAborted      = "ASK_ABORTED"
	CodeNoProvider      = "NO_PROVIDER"
	CodeNotFound        = "NOT_FOUND"
	CodeCallConflict    = "CALL_CONFLICT"
	CodeNotContinued    = "NOT_CONTINUED"
	CodeAlreadySettled  = "ALREADY_SETTLED"
	CodeUnavailable     = "UNAVAILABLE"
	// CodeSessionFull: the session has store.MaxSessionAsks active asks;
	// answer or withdraw some first (HTTP 429).
	CodeSessionFull = "SESSION_FULL"
	// CodeForbidden: the caller's role does not allow this route (an agent
	// answering, an answer surface asking) (HTTP 403).
	CodeForbidden = "FORBIDDEN"
	// CodePrincipalMismatch: the ask names a principal other than the one
	// the operator bound to its caller (HTTP 403).
	CodePrincipalMismatch = "PRINCIPAL_MISMATCH"
)

// Error is the seed's UserQuestionError: a stable Code plus a message a
// harness may show the model.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Message + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches any *Error with the same code, so callers can write
// errors.Is(err, waterfall.ErrNoProvider).
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code && t.Message == ""
}

// Errorf builds an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Sentinels for errors.Is; they carry a code and no message.
var (
	ErrEmptyQuestions  = &Error{Code: CodeEmptyQuestions}
	ErrBadRequest      = &Error{Code: CodeBadRequest}
	ErrBadTimeout      = &Error{Code: CodeBadTimeout}
	ErrBadAnswer       = &Error{Code: CodeBadAnswer}
	ErrDelegatedCaller = &Error{Code: CodeDelegatedCaller}
	ErrReplyQueued     = &Error{Code: CodeReplyQueued}
	ErrAskAborted      = &Error{Code: CodeAskAborted}
	ErrNoProvider      = &Error{Code: CodeNoProvider}
	ErrNotFound        = &Error{Code: CodeNotFound}
	ErrCallConflict    = &Error{Code: CodeCallConflict}
	ErrNotContinued    = &Error{Code: CodeNotContinued}
	ErrAlreadySettled  = &Error{Code: CodeAlreadySettled}
	ErrUnavailable     = &Error{Code: CodeUnavailable}
	ErrSessionFull     = &Error{Code: CodeSessionFull}
)

// CodeOf returns the seed code carried by err, or "" when it carries none.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// NoProviderMessage is what a harness shows the model when nobody can answer.
const NoProviderMessage = "no human available; proceed with your best judgment"
