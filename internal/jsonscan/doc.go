// Package jsonscan reads a JSON text held in memory token by token, for
// decoders that know the shape of what they read and fill it as they go.
//
// Its Decoder is the part of jsontext.Decoder (go-json-experiment/json)
// that the snapshot and policy readers use (PeekKind, ReadToken,
// ReadValue, SkipValue, InputOffset, StackDepth), with the semantics
// jsontext gives them under AllowDuplicateNames and without
// AllowInvalidUTF8: for any input, the same kinds and values, the same
// offsets and depths, and an error at the same call, up to the first
// error. After it every call fails, where jsontext may go on. What it
// does not do is word its errors: every error is ErrSyntax, and a reader
// that must say what is wrong reads the text again with a decoder that
// says it. Leaving out the streaming, the options and the error wording
// makes it the cheaper of the two per call (BENCHMARKS.md, "Eighth
// round", has the figures).
//
// Reading an object: ReadToken reads its '{'; while PeekKind is neither
// '}' nor 0 (no valid token comes), ReadValue reads a name (a string
// value, quotes included) and then the member's value, or ReadToken
// descends into it when it is an object or an array; ReadToken reads the
// '}'. Commas and colons are read with the token they precede. At most
// 10,000 objects and arrays may be open at once. The Decoder does not
// copy the text. Each call costs the length of what it reads: the white
// space and the delimiter before a token, and the token, or the whole
// value for ReadValue and SkipValue.
//
// Beyond jsontext, a caller that reads a value itself from Rest (the
// text from the next token on, once PeekKind has found it) tells the
// Decoder with ReadValueOf, which passes over the value without looking
// at it: the caller vouches that it is valid JSON. The snapshot reader
// does so for the jobs and nodes it reads in one sweep.
//
// A fuzz test holds it to jsontext call for call, and a test holds
// ReadValueOf to ReadValue.
package jsonscan
