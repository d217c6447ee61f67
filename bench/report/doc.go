// Package report owns what optsched's experiments share for showing their
// results: box-plot figures side by side (BoxFigure, the form of the
// papers' latency and cost figures), NSA's learning curve, and the
// progress bar a long run draws on a terminal.
package report
