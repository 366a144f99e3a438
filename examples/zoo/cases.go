package zoo

// Cases lists the zoo's cases. This is a placeholder on the
// zoo-scoreboard branch so the scoreboard builds before the zoo's services
// land: the zoo-services branch's cases.go replaces it on merge.
func Cases() []Case { return nil }
