// Package windowjson is the JSON codec of model.Window: it writes a window
// in the version 1 window format documented in the README (Marshal).
//
// The reader is still model.ParseWindow; it moves here next.
package windowjson
