package oltp

import (
	"fmt"
	"strings"
)

// ParseBool is benchmatrix's one reading of a boolean written as text:
// sysbench's on/off, and true/false, yes/no, 1/0, in any case.
func ParseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "true", "1", "yes":
		return true, nil
	case "off", "false", "0", "no":
		return false, nil
	}
	return false, fmt.Errorf("%q: want on or off", v)
}
