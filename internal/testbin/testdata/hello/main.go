// Command hello is what testbin's tests build: it greets its first argument.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Println("hello", os.Args[1])
}
