// Package pastry is Pastry (Rowstron and Druschel): prefix routing with
// leaf sets, as far as MaceMC's Pastry bug needs it — join through a
// bootstrap, leaf-set maintenance and failure detection — written against
// node.Service, with the bug and an option that corrects it.
package pastry
