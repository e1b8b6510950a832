// Package mapfile maps the files a command reads once into memory instead
// of reading them (see Mapped), checked as package regfile checks what it
// reads. It is apart from regfile because it needs runtime/debug to turn
// faults on mapped memory into errors, and regfile ships in every agent,
// which maps nothing: keeping Mapped there linked runtime/debug into them.
package mapfile
